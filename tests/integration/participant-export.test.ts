import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { adminClient, confirmAddress, newParticipant } from '../support/accounts.js';
import { populatedParticipant, readZip, sha256, type PopulatedParticipant } from '../support/participant-data.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let scratch: string;
let someone: PopulatedParticipant;
let admin: ApiClient;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'participant-export-'));
  portal = await startTestPortal();
  someone = await populatedParticipant(portal.url, scratch, '5550001111');
  const watched = await someone.client.put(`/api/user/watched/${someone.user.id}`);
  expect(watched.status).toBe(200);
  admin = (await adminClient(portal.url)).client;
  await confirmAddress(portal.dataDir, someone);
  // An appointment from the box office, with its own number to text.
  const appointment = await admin.post('/api/appointments', {
    email: someone.user.email,
    start: '2030-07-01T18:30',
    phone: '2025550166',
    place: 'North corner',
  });
  expect(appointment.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('exporting everything held on one participant', () => {
  it('is for administrators only, and a 404 for an unknown user', async () => {
    const path = `/api/user/${someone.user.id}/export`;
    const anonymous = await new ApiClient(portal.url).get(path);
    expect(anonymous.status).toBe(401);
    expect(anonymous.data).toMatchObject({ code: 'unauthenticated' });
    const own = await someone.client.get(path);
    expect(own.status).toBe(403);
    expect(own.data).toMatchObject({ code: 'forbidden', message: expect.any(String) });
    const unknown = await admin.get('/api/user/00000000-0000-4000-8000-000000000000/export');
    expect(unknown.status).toBe(404);
    expect(unknown.data).toEqual({ code: 'not_found', message: MESSAGES.userNotFound });
    expect((await admin.get('/api/user/not-an-id/export')).status).toBe(404);
  });

  it('answers one zip archive with the profile, the pictures, every item and every file', async () => {
    const other = await newParticipant(portal.url);
    await other.client.post('/api/evidence', { title: 'Not theirs', notes: '' });

    const response = await admin.bytes(`/api/user/${someone.user.id}/export`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="participant-${someone.user.username}-\\d{4}-\\d{2}-\\d{2}\\.zip"$`),
    );
    expect(response.headers.get('cache-control')).toContain('no-store');
    const files = await readZip(response.body);

    const profile = JSON.parse(files.get('profile.json')!.toString('utf8'));
    expect(profile.user).toEqual({
      id: someone.user.id,
      username: someone.user.username,
      full_name: 'Private Person',
      email: someone.user.email,
      email_verified: true,
      phone_number: '5550001111',
      pronouns: 'They/Them',
      role: 1,
      role_name: 'participant',
      video_watched: true,
      sms_reminders: true,
      // Registered without the terms' version (through the API): said so, not left out.
      participation_terms: 'not recorded',
      has_verification_photo: true,
      has_avatar: true,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(profile.password_reset).toEqual({ pending: false });
    expect(Date.parse(profile.exported_at)).toBeGreaterThan(Date.parse(profile.user.created_at) - 1);

    // The pictures are the stored ones (re-encoded without metadata): byte for byte what the portal serves.
    const photoName = profile.files.verification_photo as string;
    const avatarName = profile.files.avatar as string;
    const servedPhoto = await admin.bytes(`/api/user/${someone.user.id}/verification-photo`);
    const servedAvatar = await admin.bytes(`/api/user/${someone.user.id}/avatar`);
    expect(sha256(files.get(photoName)!)).toBe(sha256(servedPhoto.body));
    expect(sha256(files.get(avatarName)!)).toBe(sha256(servedAvatar.body));

    const evidence = JSON.parse(files.get('evidence.json')!.toString('utf8'));
    expect(evidence.user_id).toBe(someone.user.id);
    const items = evidence.items as Record<string, any>[];
    expect(items.map((item) => item.id).sort()).toEqual([someone.photo.id, someone.video.id, someone.note.id].sort());
    const byId = new Map(items.map((item) => [item.id as string, item]));
    expect(byId.get(someone.photo.id)).toMatchObject({
      user_id: someone.user.id,
      title: 'A photo',
      notes: 'seen at noon',
      location: '40.71280, -74.00600 (±15 m)',
      media_type: 2,
      media_status: 'ready',
      is_public: false,
      original_size: someone.uploads.photo.length,
      date_posted: someone.photo.date_posted,
    });
    expect(byId.get(someone.note.id)).toMatchObject({ title: 'A note', notes: 'Heard something', media_type: 1, files: [] });

    // Originals are what was uploaded; derivatives are what the portal serves.
    const uploaded = { [someone.photo.id]: someone.uploads.photo, [someone.video.id]: someone.uploads.video };
    for (const id of [someone.photo.id, someone.video.id]) {
      const item = byId.get(id)!;
      const variants = (item.files as { variant: string; path: string; size: number }[]).map((file) => file.variant).sort();
      expect(variants).toEqual(id === someone.video.id ? ['display', 'original', 'poster', 'thumb'] : ['display', 'original', 'thumb']);
      for (const file of item.files as { variant: string; path: string; size: number }[]) {
        expect(file.path).toMatch(new RegExp(`^evidence/${id}/${file.variant}\\.[a-z0-9]+$`));
        const bytes = files.get(file.path);
        expect(bytes, file.path).toBeDefined();
        expect(bytes!.length).toBe(file.size);
        const expected = file.variant === 'original' ? uploaded[id]! : (await admin.bytes(`/media/evidence/${id}/${file.variant}`)).body;
        expect(sha256(bytes!), file.path).toBe(sha256(expected));
      }
    }

    // Nothing of anyone else, and never the password hash.
    const everything = Buffer.concat([...files.values()]).toString('latin1');
    expect(everything).not.toContain(other.user.id);
    expect(everything).not.toContain('$argon2');
    // The appointment with its number and the records of its messages.
    const appointment = JSON.parse(files.get('appointment.json')!.toString('utf8'));
    expect(appointment.user_id).toBe(someone.user.id);
    expect(appointment.appointment).toMatchObject({
      email: someone.user.email,
      place: 'North corner',
      phone: '+12025550166',
      start: '2030-07-01T18:30:00.000Z',
    });
    expect(Array.isArray(appointment.appointment.deliveries)).toBe(true);
    const expectedNames = new Set([
      'profile.json',
      'evidence.json',
      'appointment.json',
      photoName,
      avatarName,
      ...items.flatMap((item) => item.files.map((file: { path: string }) => file.path)),
    ]);
    expect(new Set(files.keys())).toEqual(expectedNames);
  });

  it('shows a pending password reset, without its code', async () => {
    const sent = await new ApiClient(portal.url).post('/api/email/send', { email: someone.user.email });
    expect(sent.status).toBe(200);
    const files = await readZip((await admin.bytes(`/api/user/${someone.user.id}/export`)).body);
    const profile = JSON.parse(files.get('profile.json')!.toString('utf8'));
    expect(profile.password_reset).toEqual({ pending: true, expires_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
  });
});
