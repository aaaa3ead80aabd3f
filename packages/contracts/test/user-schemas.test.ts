import { describe, expect, it } from 'vitest';
import {
  MESSAGES,
  adminUserUpdateSchema,
  asOneLine,
  emailField,
  foldedName,
  fullNameField,
  isAdminRole,
  loginRequestSchema,
  phoneField,
  registrationFormSchema,
  usernameField,
} from '../src/index.js';

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

describe('usernames that look like another (the one rule of registration, the check and the admin edit)', () => {
  const refused = (name: string) => usernameField.safeParse(name).success === false;

  it('refuses default-ignorable code points and the Hangul fillers', () => {
    for (const name of [
      'bars_admin\u034F',
      'bars_admin\uFE0F',
      'bars_admin\u{E0100}',
      'bars_admin\u180B',
      'bars_admin\u17B4',
      'bars_\u3164admin',
      'bars_admin\uFFA0',
      'bars\u200Badmin',
    ])
      expect(refused(name), JSON.stringify(name)).toBe(true);
  });

  it('refuses small-capital and phonetic letters, and letters of several scripts in one name', () => {
    expect(refused('sec_ᴀdmin')).toBe(true);
    expect(refused('раураl')).toBe(true);
    expect(refused('pаypal')).toBe(true);
  });

  it('keeps the names people have, in any one script (Japanese and Korean with Latin too)', () => {
    for (const name of ['Zoë', 'José', 'Мария', 'Straße', '山田太郎', 'やまだtaro', '김철수', 'night.owl-2'])
      expect(usernameField.safeParse(name).success, name).toBe(true);
  });

  it('folds NFKC and full case for the key: fullwidth and capitals are the same name', () => {
    expect(foldedName('ｂａｒｓ_ａｄｍｉｎ')).toBe('bars_admin');
    expect(foldedName('BARS_ADMIN')).toBe('bars_admin');
    expect(foldedName('Straße')).toBe(foldedName('STRASSE'));
  });
});

describe('one address, one line, ten digits', () => {
  it('takes exactly one addr-spec', () => {
    for (const email of [
      'a,b@example.org',
      'a;b@example.org',
      '<a@example.org>',
      'Bob <a@example.org>',
      '"a b"@example.org',
      'a@b',
      'a b@example.org',
    ])
      expect(emailField.safeParse(email).success, email).toBe(false);
    for (const email of ['a@example.org', 'first.last+tag@sub.example.org', "o'brien@example.ie"])
      expect(emailField.safeParse(email).success, email).toBe(true);
  });

  it('refuses control, line-breaking and format characters in a full name, and keeps the joiners scripts need', () => {
    for (const name of ['Bob\r\nURGENT', 'Bob\tBob', 'a\u202Eb', 'a\u2028b', 'a\u0085b'])
      expect(fullNameField.safeParse(name).success, JSON.stringify(name)).toBe(false);
    expect(fullNameField.safeParse('محمد\u200Cحسین').success).toBe(true);
    expect(asOneLine('Bob\r\n\r\nURGENT\u202E')).toBe('Bob URGENT');
  });

  it('drops the spaces, dots and brackets people type between the digits, then wants ten (and no dashes, as SPEC says)', () => {
    expect(phoneField.parse('06 3110 0548')).toBe('0631100548');
    expect(phoneField.parse('(555) 123 4567')).toBe('5551234567');
    expect(phoneField.parse('555.123.4567')).toBe('5551234567');
    expect(phoneField.parse('555\u00a0123\u00a04567')).toBe('5551234567');
    for (const phone of ['+31 6 3110 0548', '555 123 45', '55512345678', 'call me', '555-123-4567'])
      expect(phoneField.safeParse(phone).success, phone).toBe(false);
    const form = registrationFormSchema.safeParse({ ...valid, phone_number: '555 123 4567', confirm_phone_number: '555.123.4567' });
    expect(form.success).toBe(true);
  });
});
