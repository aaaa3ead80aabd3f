import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAllInOne, type RunningPortal } from '@portal/all-in-one';
import { createLogger, redactUrl } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { phoneJpeg, photoBlob, registrationForm } from '../support/media.js';
import { codeIn, readOutbox, waitForMail } from '../support/outbox.js';

/**
 * The whole portal with the production logger (createLogger, its redaction included) at the most
 * verbose level, every line kept in memory, and anything else written to stdout or stderr kept
 * too; then the flows that handle secrets, and a search of everything written for each secret.
 */
const lines: string[] = [];
const printed: string[] = [];
const INTERNAL_SECRET = randomBytes(32).toString('base64url');
const ADMIN_PASSWORD = `admin-${randomBytes(9).toString('base64url')}`;
let dataDir: string;
let portal: RunningPortal;
let restoreOutput: () => void;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'portal-logs-'));
  const capture = { write: (line: string) => void lines.push(line) };
  const stdout = process.stdout.write.bind(process.stdout);
  const stderr = process.stderr.write.bind(process.stderr);
  process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) => {
    printed.push(String(chunk));
    return stdout(chunk, ...rest);
  };
  process.stderr.write = (chunk: string | Uint8Array, ...rest: never[]) => {
    printed.push(String(chunk));
    return stderr(chunk, ...rest);
  };
  restoreOutput = () => {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  };
  portal = await startAllInOne(
    {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      INTERNAL_SECRET,
      ADMIN_USERNAME: 'overseer',
      ADMIN_EMAIL: 'overseer@example.org',
      ADMIN_PASSWORD,
      PRODUCT_NAME: 'Operation Logs',
      PUBLIC_URL: 'http://portal.example.org',
    },
    (service) => createLogger({ service, level: 'trace', destination: capture }),
  );
}, 120_000);
afterAll(async () => {
  restoreOutput?.();
  rmSync(dataDir, { recursive: true, force: true });
});

const sessionOf = (client: ApiClient) => client.cookies.get('portal_session')!;
const tokenIn = (text: string) => /verify-email\?token=([^\s&"<>]+)/.exec(text)?.[1];

describe('logs', () => {
  it('hold no password, reset code, session id, e-mail token, internal secret or signed identity, whatever happened', async () => {
    const secrets: Record<string, string> = { INTERNAL_SECRET: INTERNAL_SECRET, 'the admin password': ADMIN_PASSWORD };
    const email = 'leaky@example.org';
    const first = 'first-Passw0rd!';
    const second = 'second-Passw0rd!';
    const wrong = 'not-my-Passw0rd!';
    Object.assign(secrets, { 'the first password': first, 'the second password': second, 'a wrong password': wrong });

    // Register, confirm the address with the e-mailed link.
    const client = new ApiClient(portal.url);
    const registered = await client.postForm(
      '/api/user/register',
      registrationForm(
        { username: 'leaky', email, usernameOrEmail: email, password: first },
        { bytes: await phoneJpeg({ width: 64, height: 64 }) },
      ),
    );
    expect(registered.status).toBe(201);
    const welcome = await waitForMail(dataDir, email, { subject: /Confirm/ });
    const token = decodeURIComponent(tokenIn(welcome.text)!);
    secrets['the e-mail token'] = token;
    expect((await client.get(`/api/user/verify-email?token=${encodeURIComponent(token)}`)).status).toBe(303);

    // Log in, fail to log in, an administrator logs in too.
    expect((await client.post('/api/user/login', { username: 'leaky', password: first })).status).toBe(200);
    secrets['the first session id'] = sessionOf(client);
    expect((await new ApiClient(portal.url).post('/api/user/login', { username: 'leaky', password: wrong })).status).toBe(401);
    expect((await new ApiClient(portal.url).post('/api/user/login', { username: email, password: wrong })).status).toBe(401);
    const admin = new ApiClient(portal.url);
    expect((await admin.post('/api/user/login', { username: 'overseer', password: ADMIN_PASSWORD })).status).toBe(200);
    secrets["the admin's session id"] = sessionOf(admin);
    expect((await admin.get('/api/user/users')).status).toBe(200);

    // Reset the password: send, a wrong code, the right code, the update (legacy array body too).
    const visitor = new ApiClient(portal.url);
    expect((await visitor.post('/api/email/send', { email })).status).toBe(200);
    const code = codeIn(await waitForMail(dataDir, email, { subject: /reset code/ }));
    secrets['the reset code'] = code;
    const wrongCode = code === '999999' ? '999998' : '999999';
    expect((await visitor.post('/api/email/check/reset-code', { email, code: wrongCode })).data.codeMatches).toBe(false);
    expect((await visitor.post('/api/email/check/reset-code', { email, code })).data.codeMatches).toBe(true);
    expect((await visitor.put('/api/user/passwordupdated', [{ email, code, password: second }])).status).toBe(200);
    // The old session ended with the reset; a new login with the new password.
    expect((await client.get('/api/user')).status).toBe(401);
    expect((await client.post('/api/user/login', { username: 'leaky', password: second })).status).toBe(200);
    secrets['the second session id'] = sessionOf(client);

    // A profile update with a new address (given with the current password) and an avatar: another e-mail link.
    const refused = new FormData();
    for (const [name, value] of Object.entries({
      email: 'leaky2@example.org',
      phone_number: '5551234567',
      pronouns: '',
      current_password: wrong,
    }))
      refused.append(name, value);
    expect((await client.putForm('/api/evidence/user', refused)).status).toBe(400);
    const profile = new FormData();
    profile.append('email', 'leaky2@example.org');
    profile.append('current_password', second);
    profile.append('phone_number', '5551234567');
    profile.append('pronouns', 'They/Them');
    profile.append('avatar', photoBlob(await phoneJpeg({ width: 64, height: 64 })), 'me.jpg');
    expect((await client.putForm('/api/evidence/user', profile)).status).toBe(200);
    const changed = await waitForMail(dataDir, 'leaky2@example.org', { subject: /Confirm/ });
    secrets['the second e-mail token'] = decodeURIComponent(tokenIn(changed.text)!);
    expect((await client.get(`/api/user/verify-email?token=${tokenIn(changed.text)}`)).status).toBe(303);

    // Something the services reject as a forged identity, and a logout.
    const forged = await fetch(`${portal.url}/api/user`, {
      headers: { 'x-portal-identity': 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.forged' },
    });
    expect(forged.status).toBe(401);
    expect((await client.post('/api/user/logout')).status).toBe(200);
    expect((await admin.post('/api/user/logout')).status).toBe(200);

    // Let the e-mails be sent and logged, then stop, so every line is written.
    await waitFor(async () => ((await readOutbox(dataDir)).length >= 3 ? true : null), { what: 'the e-mails' });
    await portal.stop();

    const everything = [...lines, ...printed].join('');
    expect(lines.length).toBeGreaterThan(50);
    // The capture really is verbose: the debug lines of successful calls are there (nothing in
    // the portal logs at trace, the level asked for).
    expect(everything).toContain('"level":20');
    expect(everything).toContain('/api/user/login');
    expect(everything).toContain('verify-email?token=[redacted]');

    const found = Object.entries(secrets)
      .filter(([what, value]) => (what === 'the reset code' ? new RegExp(`\\b${value}\\b`).test(everything) : everything.includes(value)))
      .map(([what]) => what);
    expect(found).toEqual([]);
    // Signed tokens between services (the caller's identity, the service token) are JWTs; none
    // may be written, not even the forged one a client sent.
    expect(everything.match(/eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*/g) ?? []).toEqual([]);
    expect(everything).not.toContain('$argon2');
  }, 120_000);
});

describe('redactUrl', () => {
  it('hides the values of credential-bearing query parameters, and nothing else', () => {
    expect(redactUrl('/api/user/verify-email?token=abc.def')).toBe('/api/user/verify-email?token=[redacted]');
    expect(redactUrl('/x?a=1&code=123456&b=2')).toBe('/x?a=1&code=[redacted]&b=2');
    expect(redactUrl('/x?Password=p&sessionId=s#frag')).toBe('/x?Password=[redacted]&sessionId=[redacted]#frag');
    expect(redactUrl('/api/evidence?limit=50&cursor=abc')).toBe('/api/evidence?limit=50&cursor=abc');
    expect(redactUrl('/media/evidence/1/display?v=3')).toBe('/media/evidence/1/display?v=3');
  });
});
