import { describe, expect, it } from 'vitest';
import { MESSAGES, adminUserUpdateSchema, isAdminRole, loginRequestSchema, registrationFormSchema } from '../src/index.js';

const valid = {
  username: 'nightowl',
  password: 'seven77',
  confirm_password: 'seven77',
  email: ' Owl@Example.ORG ',
  phone_number: '5551234567',
  confirm_phone_number: '5551234567',
  full_name: 'Night Owl',
  pronouns: '',
  accept_terms: true,
};

function firstMessage(input: unknown, path: string): string | undefined {
  const result = registrationFormSchema.safeParse(input);
  return result.success ? undefined : result.error.issues.find((issue) => issue.path.join('.') === path)?.message;
}

describe('registration form schema (shared by the browser and the server)', () => {
  it('accepts a valid form and normalises the e-mail address', () => {
    const parsed = registrationFormSchema.parse(valid);
    expect(parsed.email).toBe('owl@example.org');
  });

  it('says exactly what SPEC section 5 says', () => {
    expect(firstMessage({ ...valid, password: 'six666', confirm_password: 'six666' }, 'password')).toBe(MESSAGES.passwordTooShort);
    expect(firstMessage({ ...valid, confirm_password: 'seven78' }, 'confirm_password')).toBe(MESSAGES.passwordsDoNotMatch);
    expect(firstMessage({ ...valid, email: 'owl@nowhere' }, 'email')).toBe(MESSAGES.invalidEmail);
    expect(firstMessage({ ...valid, phone_number: '555-123-45' }, 'phone_number')).toBe(MESSAGES.phoneFormat);
    expect(firstMessage({ ...valid, confirm_phone_number: '5551234568' }, 'confirm_phone_number')).toBe(MESSAGES.phonesDoNotMatch);
    expect(firstMessage({ ...valid, username: '' }, 'username')).toBe(MESSAGES.registrationInput);
    expect(firstMessage({ ...valid, password: '' }, 'password')).toBe(MESSAGES.registrationInput);
    expect(firstMessage({ ...valid, accept_terms: false }, 'accept_terms')).toBe(MESSAGES.termsRequired);
  });

  it('needs both login fields', () => {
    const result = loginRequestSchema.safeParse({ username: 'x', password: '' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(MESSAGES.loginInput);
  });

  it('drops role and video_watched from an admin edit', () => {
    const parsed = adminUserUpdateSchema.parse({
      username: 'abc',
      email: 'a@b.co',
      phone_number: '5551234567',
      full_name: 'A',
      role: 2,
      video_watched: true,
    });
    expect(parsed).not.toHaveProperty('role');
    expect(parsed).not.toHaveProperty('video_watched');
  });

  it('treats every role other than 1 as an administrator', () => {
    expect([1, 2, 3, 0].map(isAdminRole)).toEqual([false, true, true, true]);
  });
});
