import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { publishedEvents } from '../support/accounts.js';
import { phoneJpeg, registrationForm } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { identitySettingsFromEnv } from '@portal/identity';

let portal: TestPortal;
let photo: Buffer;
beforeAll(async () => {
  portal = await startTestPortal();
  photo = await phoneJpeg();
});
afterAll(() => portal.dispose());

const client = () => new ApiClient(portal.url);

describe('registration', () => {
  it('creates a participant with role 1 whatever role the client sends, and never answers the password hash', async () => {
    const api = client();
    const response = await api.postForm(
      '/api/user/register',
      registrationForm({ username: 'first_informant', email: 'First@Example.org', role: '2' }, { bytes: photo }),
    );
    expect(response.status).toBe(201);
    expect(response.data).toMatchObject({
      username: 'first_informant',
      email: 'first@example.org',
      role: 1,
      video_watched: false,
      verification_photo: true,
      pronouns: 'They/Them',
      phone_number: '5551234567',
      full_name: 'Ida Informant',
      avatar_AWS_URL: null,
    });
    expect(response.data.verification_photo_AWS_URL).toMatch(/^\/api\/user\/[0-9a-f-]{36}\/verification-photo\?v=/);
    expect(JSON.stringify(response.data)).not.toMatch(/argon2|password/);
    // Registration does not log in by itself: the app logs in next, as the spec says.
    expect(api.cookies.size).toBe(0);
  });

  it('announces the new user on the bus', async () => {
    const api = client();
    const response = await api.postForm(
      '/api/user/register',
      registrationForm({ username: 'announced', email: 'announced@example.org' }, { bytes: photo }),
    );
    expect(response.status).toBe(201);
    const event = await waitFor(
      () => publishedEvents(portal.dataDir).find((e) => e.value.type === 'user.registered' && e.key === response.data.id),
      { what: 'user.registered' },
    );
    expect(event.topic).toBe('identity.users');
    expect(event.value.data).toMatchObject({ userId: response.data.id, username: 'announced', role: 1 });
  });

  it.each([
    [{ password: 'short' }, MESSAGES.passwordTooShort, 'password'],
    [{ email: 'not-an-email' }, MESSAGES.invalidEmail, 'email'],
    [{ phone_number: '555-123-4567' }, MESSAGES.phoneFormat, 'phone_number'],
    [{ phone_number: '555123456' }, MESSAGES.phoneFormat, 'phone_number'],
    [{ username: undefined }, MESSAGES.registrationInput, 'username'],
    [{ password: undefined }, MESSAGES.registrationInput, 'password'],
    [{ full_name: '' }, MESSAGES.fullNameRequired, 'full_name'],
    [{ pronouns: 'Xe/Xem' }, MESSAGES.pronounsInvalid, 'pronouns'],
    [{ username: 'has spaces' }, MESSAGES.usernameFormat, 'username'],
  ])('refuses %j with the spec message', async (fields, message, field) => {
    const response = await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'rule_breaker', email: 'rules@example.org', ...fields }, { bytes: photo }),
    );
    expect(response.status).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_failed', message });
    expect(response.data.fields[field]).toBe(message);
    const check = await client().post('/api/user/check', { username: 'rule_breaker', email: 'rules@example.org' });
    expect(check.data.exists).toBe(false);
  });

  it('requires a photo', async () => {
    const response = await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'no_photo', email: 'nophoto@example.org' }, null),
    );
    expect(response.status).toBe(400);
    expect(response.data.message).toBe(MESSAGES.photoRequired);
  });

  it('judges the photo by its bytes, not by its name or claimed type', async () => {
    const response = await client().postForm(
      '/api/user/register',
      registrationForm(
        { username: 'fake_photo', email: 'fake@example.org' },
        { bytes: Buffer.from('<script>alert(1)</script>'), name: 'face.jpg', type: 'image/jpeg' },
      ),
    );
    expect(response.status).toBe(415);
    expect(response.data.message).toBe(MESSAGES.photoNotImage);
    expect((await client().post('/api/user/check', { username: 'fake_photo' })).data.exists).toBe(false);
  });

  it('accepts a PNG sent with a wrong claimed type', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const response = await client().postForm(
      '/api/user/register',
      registrationForm(
        { username: 'png_person', email: 'png@example.org' },
        { bytes: png, name: 'me.bin', type: 'application/octet-stream' },
      ),
    );
    expect(response.status).toBe(201);
  });

  it('refuses a photo over the size limit with a 413', async () => {
    const small = await startTestPortal({ PHOTO_MAX_BYTES: '20kb' });
    try {
      const big = await phoneJpeg({ width: 3000, height: 3000 });
      const response = await new ApiClient(small.url).postForm(
        '/api/user/register',
        registrationForm({ username: 'big_photo', email: 'big@example.org' }, { bytes: Buffer.concat([big, Buffer.alloc(30 * 1024)]) }),
      );
      expect(response.status).toBe(413);
      expect(response.data.message).toMatch(/too large \(at most 20 KB\)/);
    } finally {
      await small.dispose();
    }
  });

  it('refuses a truncated multipart body with a 400', async () => {
    const boundary = '----portal-test';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\ncut_off\r\n--${boundary}\r\nContent-Disposition: form-data; name="verification_photo"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n\xff\xd8\xff`;
    const response = await fetch(`${portal.url}/api/user/register`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('validation_failed');
  });

  it('keeps usernames and e-mail addresses unique without regard to case', async () => {
    const first = await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'TwinName', email: 'twin@example.org' }, { bytes: photo }),
    );
    expect(first.status).toBe(201);
    const sameName = await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'twinname', email: 'other@example.org' }, { bytes: photo }),
    );
    expect(sameName.status).toBe(409);
    expect(sameName.data).toMatchObject({
      code: 'conflict',
      message: MESSAGES.usernameTaken,
      fields: { username: MESSAGES.usernameTaken },
    });
    const sameEmail = await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'another', email: 'TWIN@example.org' }, { bytes: photo }),
    );
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.data.message).toBe(MESSAGES.emailTaken);
  });
});

describe('registration rate limit', () => {
  it('lets a shared network register tens a minute, then answers 429 with a clear message, before reading the photo', async () => {
    const limited = await startTestPortal({ AUTH_RATE_LIMITS: 'true', REGISTER_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const venue = new ApiClient(limited.url, { fromAddress: '127.0.0.3' });
      const form = (tag: string) => registrationForm({ username: `venue_${tag}`, email: `venue_${tag}@example.org` }, { bytes: photo });
      for (const tag of ['a', 'b', 'c']) expect((await venue.postForm('/api/user/register', form(tag))).status).toBe(201);
      const refused = await venue.postForm('/api/user/register', form('d'));
      expect(refused.status).toBe(429);
      expect(refused.data).toEqual({ code: 'rate_limited', message: MESSAGES.tooManyRegistrations });
      expect(refused.headers.get('ratelimit-policy') ?? refused.headers.get('ratelimit')).toBeTruthy();
      // Nothing of the refused registration was kept.
      expect((await venue.post('/api/user/check', { username: 'venue_d' })).data.exists).toBe(false);
      // Another network is counted apart.
      const elsewhere = new ApiClient(limited.url, { fromAddress: '127.0.0.4' });
      expect((await elsewhere.postForm('/api/user/register', form('e'))).status).toBe(201);
    } finally {
      await limited.dispose();
    }
  });

  it('reads REGISTER_RATE_LIMIT_PER_MINUTE, 30 unless set, 0 for none', () => {
    expect(identitySettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(32) }).registerRateLimitPerMinute).toBe(30);
    expect(
      identitySettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(32), REGISTER_RATE_LIMIT_PER_MINUTE: '0' }).registerRateLimitPerMinute,
    ).toBe(0);
  });
});

describe('uniqueness check', () => {
  it('says which field is taken', async () => {
    await client().postForm(
      '/api/user/register',
      registrationForm({ username: 'checked', email: 'checked@example.org' }, { bytes: photo }),
    );
    expect((await client().post('/api/user/check', { username: 'CHECKED', email: 'free@example.org' })).data).toEqual({
      exists: true,
      message: MESSAGES.usernameTaken,
      field: 'username',
    });
    expect((await client().post('/api/user/check', { username: 'free_name', email: 'checked@example.org' })).data.field).toBe('email');
    expect((await client().post('/api/user/check', { username: 'free_name', email: 'free@example.org' })).data).toEqual({
      exists: false,
      message: '',
      field: null,
    });
  });

  // An accepted risk (docs/SECURITY.md): the checks say whether a name or an address is taken;
  // what bounds them is the limit per client address.
  it('is limited per address: 200 uniqueness checks and 60 address checks in 15 minutes, then a 429', async () => {
    const limited = await startTestPortal({ AUTH_RATE_LIMITS: 'true' });
    try {
      const prober = new ApiClient(limited.url, { fromAddress: '127.0.0.5' });
      for (let i = 0; i < 200; i += 1) expect((await prober.post('/api/user/check', { username: `probe_${i}` })).status).toBe(200);
      const refused = await prober.post('/api/user/check', { username: 'probe_more' });
      expect(refused.status).toBe(429);
      expect(refused.data.message).toEqual(expect.any(String));
      for (let i = 0; i < 60; i += 1)
        expect((await prober.post('/api/email/check-email', { email: `probe_${i}@example.org` })).status).toBe(200);
      expect((await prober.post('/api/email/check-email', { email: 'probe_more@example.org' })).status).toBe(429);
      // Another address is counted apart.
      expect(
        (await new ApiClient(limited.url, { fromAddress: '127.0.0.6' }).post('/api/user/check', { username: 'probe_more' })).status,
      ).toBe(200);
    } finally {
      await limited.dispose();
    }
  });

  it('answers malformed JSON with a 400 and a readable message', async () => {
    const response = await fetch(`${portal.url}/api/user/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"username": ',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', message: MESSAGES.malformedJson });
  });
});
