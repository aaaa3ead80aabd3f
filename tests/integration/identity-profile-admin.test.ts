import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { runAdminCommand } from '@portal/identity';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant, publishedEvents } from '../support/accounts.js';
import { phoneJpeg, photoBlob } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { waitForMail } from '../support/outbox.js';

let portal: TestPortal;
beforeAll(async () => {
  portal = await startTestPortal();
});
afterAll(() => portal.dispose());

function profileForm(fields: Record<string, string>, avatar?: Buffer): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries({ email: 'x@example.org', phone_number: '5550000000', pronouns: '', ...fields }))
    form.append(name, value);
  if (avatar) form.append('file', photoBlob(avatar), 'avatar.jpg');
  return form;
}

describe('profile', () => {
  it('updates e-mail, phone, pronouns and full name, and announces the change', async () => {
    const { client, user, password } = await newParticipant(portal.url);
    const response = await client.putForm(
      '/api/evidence/user',
      profileForm({
        email: `new_${user.username}@example.org`,
        phone_number: '5559876543',
        pronouns: 'She/Her',
        full_name: 'Renamed Person',
        current_password: password,
      }),
    );
    expect(response.status).toBe(200);
    expect(response.data).toMatchObject({
      phone_number: '5559876543',
      pronouns: 'She/Her',
      full_name: 'Renamed Person',
      email_verified: false,
      role: 1,
    });
    const event = await waitFor(() => publishedEvents(portal.dataDir).find((e) => e.value.type === 'user.updated' && e.key === user.id), {
      what: 'user.updated',
    });
    expect(event.value.data).toMatchObject({ userId: user.id, full_name: 'Renamed Person' });
  });

  it('accepts JSON too, and applies the same rules', async () => {
    const { client, user } = await newParticipant(portal.url);
    const bad = await client.put('/api/evidence/user', { email: user.email, phone_number: '12', pronouns: '' });
    expect(bad.status).toBe(400);
    expect(bad.data.message).toBe(MESSAGES.phoneFormat);
    const good = await client.put('/api/evidence/user', { email: user.email, phone_number: '5551112222', pronouns: 'Other' });
    expect(good.status).toBe(200);
    expect(good.data.pronouns).toBe('Other');
  });

  it("refuses another account's e-mail address", async () => {
    const first = await newParticipant(portal.url);
    const second = await newParticipant(portal.url);
    const response = await second.client.putForm(
      '/api/evidence/user',
      profileForm({ email: first.user.email, current_password: second.password }),
    );
    expect(response.status).toBe(409);
    expect(response.data.fields.email).toBe(MESSAGES.emailTaken);
  });

  it('changes the e-mail address only with the current password, and tells the old address', async () => {
    const { client, user, password } = await newParticipant(portal.url);
    const moved = `moved_${user.username}@example.org`;
    const details = { email: moved, phone_number: '5551234567', pronouns: '' };

    const missing = await client.put('/api/evidence/user', details);
    expect(missing.status).toBe(400);
    expect(missing.data).toMatchObject({
      message: MESSAGES.currentPasswordRequired,
      fields: { current_password: MESSAGES.currentPasswordRequired },
    });
    const wrong = await client.putForm('/api/evidence/user', profileForm({ ...details, current_password: 'not-my-password' }));
    expect(wrong.status).toBe(400);
    expect(wrong.data).toMatchObject({
      message: MESSAGES.currentPasswordWrong,
      fields: { current_password: MESSAGES.currentPasswordWrong },
    });
    expect((await client.get('/api/user')).data.email).toBe(user.email);

    // The other fields still change without a password while the address stays (case and spaces aside).
    const same = await client.put('/api/evidence/user', { ...details, email: ` ${user.email.toUpperCase()} `, phone_number: '5550001111' });
    expect(same.status).toBe(200);
    expect(same.data).toMatchObject({ email: user.email, phone_number: '5550001111' });

    const changed = await client.put('/api/evidence/user', { ...details, current_password: password });
    expect(changed.status).toBe(200);
    expect(changed.data).toMatchObject({ email: moved, email_verified: false });
    const notice = await waitForMail(portal.dataDir, user.email, { subject: /e-mail address was changed/ });
    expect(notice.text).toContain(moved);
    expect(notice.text).toContain('not you');
    await waitForMail(portal.dataDir, moved, { subject: /Confirm your e-mail/ });
    // The old address can no longer be used to sign in or to ask for a code.
    expect((await new ApiClient(portal.url).post('/api/email/check-email', { email: user.email })).data.exists).toBe(false);
  });

  it('stores the avatar re-encoded, upright, without GPS or camera data, and serves it to its owner alone (never to a visitor, never kept by shared caches)', async () => {
    const { client, password } = await newParticipant(portal.url);
    const response = await client.putForm(
      '/api/evidence/user',
      profileForm(
        { email: `avatar_${Date.now()}@example.org`, current_password: password },
        await phoneJpeg({ width: 640, height: 480, orientation: 6 }),
      ),
    );
    expect(response.status).toBe(200);
    const url = response.data.avatar_AWS_URL as string;
    expect(url).toMatch(/^\/api\/user\/.+\/avatar\?v=/);
    // Public answers carry no avatar (docs/SECURITY.md): a visitor is refused it.
    expect((await new ApiClient(portal.url).bytes(url)).status).toBe(401);
    const own = await client.bytes(url);
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('image/webp');
    expect(own.headers.get('cache-control')).toMatch(/private/);
    expect(own.headers.get('cache-control')).not.toMatch(/public/);
    const metadata = await sharp(own.body).metadata();
    expect(metadata.format).toBe('webp');
    expect(metadata.exif).toBeUndefined();
    expect(metadata.orientation ?? 1).toBe(1);
    expect(own.body.includes(Buffer.from('TestPhone'))).toBe(false);
  });

  it('refuses an avatar that is not an image', async () => {
    const { client, user } = await newParticipant(portal.url);
    const response = await client.putForm('/api/evidence/user', profileForm({ email: user.email }, Buffer.from('%PDF-1.4 not a picture')));
    expect(response.status).toBe(415);
    expect(response.data.message).toBe(MESSAGES.avatarNotImage);
  });

  it('needs a session', async () => {
    expect((await new ApiClient(portal.url).putForm('/api/evidence/user', profileForm({}))).status).toBe(401);
  });
});

describe('verification photo', () => {
  it('is shown to its owner and administrators only, without GPS, never cached by shared caches', async () => {
    const owner = await newParticipant(portal.url);
    const other = await newParticipant(portal.url);
    const { client: admin } = await adminClient(portal.url);
    const me = (await owner.client.get('/api/user')).data;
    const url = me.verification_photo_AWS_URL as string;

    const mine = await owner.client.bytes(url);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('image/jpeg');
    expect(mine.headers.get('cache-control')).toMatch(/^private/);
    const metadata = await sharp(mine.body).metadata();
    expect(metadata.exif).toBeUndefined();
    // The phone photo was 640x480 with orientation 6 (rotated): the stored copy is upright.
    expect([metadata.width, metadata.height]).toEqual([480, 640]);

    expect((await admin.bytes(url)).status).toBe(200);
    expect((await other.client.bytes(url)).status).toBe(403);
    expect((await new ApiClient(portal.url).bytes(url)).status).toBe(401);
  });
});

describe('administration of users', () => {
  it('is refused without a session (401) and to participants (403) on every route', async () => {
    const participant = await newParticipant(portal.url);
    const target = await newParticipant(portal.url);
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/user/users'],
      [
        'PUT',
        `/api/user/admin/${target.user.id}`,
        { username: 'x_y_z', email: 'x@example.org', phone_number: '5551234567', full_name: 'X' },
      ],
      ['DELETE', `/api/user/${target.user.id}`],
    ];
    for (const [method, path, json] of calls) {
      const anonymous = await new ApiClient(portal.url).request(method, path, { json });
      expect(anonymous.status, `${method} ${path} anonymous`).toBe(401);
      const asParticipant = await participant.client.request(method, path, { json });
      expect(asParticipant.status, `${method} ${path} participant`).toBe(403);
      expect(asParticipant.data.message).toBe(MESSAGES.forbidden);
    }
    expect((await participant.client.get('/api/user')).status).toBe(200);
    expect((await target.client.get('/api/user')).status).toBe(200);
  });

  it('lists users a page at a time with a Link header to the next page', async () => {
    for (let i = 0; i < 3; i++) await newParticipant(portal.url);
    const { client } = await adminClient(portal.url);
    const seen = new Set<string>();
    let next: string | null = '/api/user/users?limit=2';
    let pages = 0;
    while (next) {
      const page = await client.get(next);
      expect(page.status).toBe(200);
      expect(Array.isArray(page.data)).toBe(true);
      expect(page.data.length).toBeLessThanOrEqual(2);
      for (const user of page.data) seen.add(user.id);
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1] ?? null;
      pages++;
    }
    const all = await client.get('/api/user/users?limit=200');
    expect(seen.size).toBe(all.data.length);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(all.data[0]).toHaveProperty('email');
    expect((await client.get('/api/user/users?limit=0')).status).toBe(400);
    expect((await client.get('/api/user/users?limit=abc')).status).toBe(400);
  });

  it('edits username, e-mail, phone and full name, never role or video_watched', async () => {
    const target = await newParticipant(portal.url, {}, undefined, { watched: false });
    const { client } = await adminClient(portal.url);
    const response = await client.put(`/api/user/admin/${target.user.id}`, {
      username: `${target.user.username}_x`,
      email: `edited_${target.user.email}`,
      phone_number: '5554443333',
      full_name: 'Edited Name',
      role: 2,
      video_watched: true,
    });
    expect(response.status).toBe(200);
    expect(response.data).toMatchObject({
      username: `${target.user.username}_x`,
      phone_number: '5554443333',
      full_name: 'Edited Name',
      role: 1,
      video_watched: false,
    });
    expect(
      (
        await client.put(`/api/user/admin/${target.user.id}`, {
          username: 'overseer',
          email: 'z@example.org',
          phone_number: '5554443333',
          full_name: 'X',
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await client.put('/api/user/admin/00000000-0000-4000-8000-000000000000', {
          username: 'ghost_1',
          email: 'g@example.org',
          phone_number: '5554443333',
          full_name: 'G',
        })
      ).status,
    ).toBe(404);
    expect((await client.put('/api/user/admin/not-a-uuid', {})).status).toBe(404);
  });

  it('deletes a user: their session ends at once, their photo goes, the deletion is announced', async () => {
    const target = await newParticipant(portal.url);
    const photoUrl = (await target.client.get('/api/user')).data.verification_photo_AWS_URL;
    const { client } = await adminClient(portal.url);
    expect((await client.bytes(photoUrl)).status).toBe(200);
    const response = await client.delete(`/api/user/${target.user.id}`);
    expect(response.status).toBe(200);
    expect(response.data.message).toBe(MESSAGES.userDeleted);
    expect((await target.client.get('/api/user')).status).toBe(401);
    expect((await client.bytes(photoUrl)).status).toBe(404);
    expect((await client.delete(`/api/user/${target.user.id}`)).status).toBe(404);
    const types = () =>
      publishedEvents(portal.dataDir)
        .filter((e) => e.key === target.user.id)
        .map((e) => e.value.type);
    await waitFor(() => types().includes('user.deleted') && types().includes('sessions.revoked'), { what: 'deletion events' });
    const login = await new ApiClient(portal.url).post('/api/user/login', { username: target.user.username, password: target.password });
    expect(login.status).toBe(401);
  });

  it('will not let an administrator delete themselves', async () => {
    const { client, user } = await adminClient(portal.url);
    const response = await client.delete(`/api/user/${user.id}`);
    expect(response.status).toBe(400);
    expect(response.data.message).toBe(MESSAGES.cannotDeleteSelf);
  });
});

describe('first administrator and the ops command', () => {
  it('creates the administrator from ADMIN_* at start, recognised as role 2', async () => {
    const { client } = await adminClient(portal.url);
    const me = (await client.get('/api/user')).data;
    expect(me).toMatchObject({ username: 'overseer', role: 2, video_watched: true });
  });

  it('promotes a participant, and creates a new administrator who can log in', async () => {
    const participant = await newParticipant(portal.url);
    const output: string[] = [];
    const env = { DATA_DIR: portal.dataDir, ADMIN_PASSWORD: 'second-admin-pw' };
    expect(await runAdminCommand(['promote', '--user', participant.user.username], env, (line) => output.push(line))).toBe(0);
    expect(output.at(-1)).toMatch(/is now an administrator/);
    // The participant's existing session learns the new role (the gateway cache is evicted by the event).
    await waitFor(async () => (await participant.client.get('/api/user/users')).status === 200, { what: 'admin access after promotion' });

    expect(
      await runAdminCommand(['create', '--username', 'second_admin', '--email', 'second@example.org'], env, (line) => output.push(line)),
    ).toBe(0);
    const login = await new ApiClient(portal.url).post('/api/user/login', { username: 'second_admin', password: 'second-admin-pw' });
    expect(login.status).toBe(200);
    expect(login.data.role).toBe(2);

    expect(await runAdminCommand(['create', '--username', 'bad admin', '--email', 'x@example.org'], env, (line) => output.push(line))).toBe(
      1,
    );
    expect(output.at(-1)).toBe(MESSAGES.usernameFormat);
    expect(await runAdminCommand(['promote', '--user', 'nobody_here'], env, (line) => output.push(line))).toBe(1);
    expect(await runAdminCommand([], env, (line) => output.push(line))).toBe(2);
  });
});
