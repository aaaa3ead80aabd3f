import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { PhotoProcessor } from '../../services/identity/src/domain/photo-processor.js';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { cookieOf, isTemporary, portalProcesses, sha256 } from '../support/crash.js';
import { multipartBody } from '../support/hostile.js';
import { pacedRequest } from '../support/portal-process.js';
import { blobKeys, storageFiles } from '../support/storage-scan.js';

let scratch: string;
const processes = portalProcesses();
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'identity-crash-'));
});
afterAll(async () => {
  await processes.killAll();
  rmSync(scratch, { recursive: true, force: true });
});

/** Noise photos of a few hundred KB (a face photo from a phone, as far as the server can tell). */
const noiseJpeg = (width: number, height: number) =>
  sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();

interface Registration {
  username: string;
  face: number;
  state: 'sending' | 'acknowledged' | 'failed';
  status?: number;
  id?: string;
}

interface Deletion {
  id: string;
  state: 'sending' | 'acknowledged' | 'failed';
}

/** The accounts and their picture keys, read from identity's database (readonly). */
function accounts(dataDir: string): Map<string, { verification_photo_key: string | null; avatar_key: string | null }> {
  const db = new Database(join(dataDir, 'identity.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, verification_photo_key, avatar_key FROM users').all() as {
      id: string;
      verification_photo_key: string | null;
      avatar_key: string | null;
    }[];
    return new Map(rows.map(({ id, ...keys }) => [id, keys]));
  } finally {
    db.close();
  }
}

function idOf(dataDir: string, username: string): string {
  const db = new Database(join(dataDir, 'identity.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT id FROM users WHERE username = ?').get(username) as { id: string }).id;
  } finally {
    db.close();
  }
}

/** Blobs under users/ that no account refers to (by its row). */
function unreferencedPictures(dataDir: string): string[] {
  const rows = accounts(dataDir);
  return blobKeys(dataDir, 'users/').filter((key) => {
    const keys = rows.get(key.split('/')[1]!);
    return !keys || (keys.verification_photo_key !== key && keys.avatar_key !== key);
  });
}

describe('a crash (kill -9) while participants register, change their avatar and are deleted', () => {
  it('keeps every acknowledged account with its photo intact, and leaves no picture that no account refers to', async () => {
    const dataDir = join(scratch, 'data');
    const first = await processes.start(dataDir);
    const faces = await Promise.all(Array.from({ length: 6 }, (_, n) => noiseJpeg(700 + 90 * n, 520 + 70 * n)));
    // What the server stores of each face: the same processing here gives the same bytes.
    const photos = new PhotoProcessor();
    const expected = await Promise.all(
      faces.map(async (face, n) => {
        const path = join(scratch, `face-${n}.jpg`);
        writeFileSync(path, face);
        return sha256((await photos.verificationPhoto(path)).bytes);
      }),
    );
    const changers = await Promise.all(Array.from({ length: 3 }, () => newParticipant(first.url)));
    const doomed = await Promise.all(Array.from({ length: 8 }, () => newParticipant(first.url)));
    const admin = (await adminClient(first.url)).client;

    let dead = false;
    const registrations: Registration[] = [];
    const register = async () => {
      while (!dead) {
        const n = registrations.length;
        const registration: Registration = { username: `storm_${randomUUID().slice(0, 8)}`, face: n % faces.length, state: 'sending' };
        registrations.push(registration);
        const { body, contentType } = multipartBody(
          {
            username: registration.username,
            password: 'password1',
            email: `${registration.username}@example.org`,
            usernameOrEmail: `${registration.username}@example.org`,
            phone_number: '5551234567',
            full_name: 'Storm Person',
            pronouns: '',
            role: '1',
          },
          { field: 'verification_photo', filename: 'face.jpg', type: 'image/jpeg', bytes: faces[registration.face]! },
        );
        try {
          const answer = await pacedRequest(new URL('/api/user/register', first.url).href, 'POST', { 'content-type': contentType }, body, {
            bytesPerSecond: 1024 * 1024,
          });
          registration.status = answer.status;
          registration.id = answer.status === 201 ? (JSON.parse(answer.text) as { id: string }).id : undefined;
          registration.state = registration.id ? 'acknowledged' : 'failed';
        } catch {
          registration.state = 'failed';
        }
      }
    };
    let avatarsChanged = 0;
    const changeAvatars = async ({ client, user }: (typeof changers)[number]) => {
      for (let n = 0; !dead; n++) {
        const { body, contentType } = multipartBody(
          { email: user.email, phone_number: '5551234567', pronouns: '' },
          { field: 'file', filename: 'me.jpg', type: 'image/jpeg', bytes: faces[n % faces.length]! },
        );
        const answer = await pacedRequest(
          new URL('/api/evidence/user', first.url).href,
          'PUT',
          { 'content-type': contentType, cookie: cookieOf(client) },
          body,
          {
            bytesPerSecond: 1024 * 1024,
          },
        ).catch(() => null);
        if (answer?.status === 200) avatarsChanged += 1;
      }
    };
    const deletions: Deletion[] = [];
    const deleteSome = async () => {
      for (const { user } of doomed) {
        if (dead) return;
        const deletion: Deletion = { id: user.id, state: 'sending' };
        deletions.push(deletion);
        const answer = await pacedRequest(
          new URL(`/api/user/${user.id}`, first.url).href,
          'DELETE',
          { cookie: cookieOf(admin) },
          Buffer.alloc(0),
        ).catch(() => null);
        deletion.state = answer?.status === 200 ? 'acknowledged' : 'failed';
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
    };
    const storm = Promise.all([...Array.from({ length: 8 }, register), ...changers.map(changeAvatars), deleteSome()]);

    // The process dies when a picture is written and its account not saved (or already deleted):
    // the moment a crash used to leave an orphan. Seen in identity's database (its notes) and on
    // disk (the picture); if that moment does not come, it dies anyway after a while.
    const blobOnDisk = (noted: string) => existsSync(join(dataDir, 'blobs', 'data', ...noted.split('/').filter(Boolean)));
    const watcher = new Database(join(dataDir, 'identity.sqlite'), { readonly: true, fileMustExist: true });
    const unsaved = watcher.prepare(
      "SELECT prefix FROM blob_intents b WHERE NOT EXISTS (SELECT 1 FROM users u WHERE b.prefix LIKE 'users/' || u.id || '/%')",
    );
    const acknowledged = () => registrations.filter((registration) => registration.state === 'acknowledged').length;
    let moment = 'after 40 s, no picture seen between its write and its account';
    try {
      await waitFor(
        () => {
          if (acknowledged() < 8) return false;
          const noted = (unsaved.all() as { prefix: string }[]).map((row) => row.prefix).filter(blobOnDisk);
          if (noted.length > 0) moment = `with ${noted.length} picture(s) written and no account referring to them (${noted.join(', ')})`;
          return noted.length > 0;
        },
        { timeoutMs: 40_000, intervalMs: 1, what: 'a picture written before its account' },
      );
    } catch {
      // Killed anyway (see `moment`).
    }
    await first.kill();
    dead = true;
    watcher.close();
    await storm;

    const inFlight = registrations.filter((registration) => registration.state === 'failed');
    const orphansAtTheKill = unreferencedPictures(dataDir);
    const leftByTheDead = new Set([...storageFiles(dataDir)].filter(isTemporary));
    // Before the kill, every registration that was answered was accepted.
    expect(registrations.filter((registration) => registration.status !== undefined && registration.status !== 201)).toEqual([]);

    const second = await processes.start(dataDir);
    const url = second.url;
    const root = (await adminClient(url)).client;
    const photoOf = async (id: string) => root.bytes(`/api/user/${id}/verification-photo`);

    // Every acknowledged account is there, with its photo byte for byte.
    for (const registration of registrations.filter((candidate) => candidate.state === 'acknowledged')) {
      const photo = await photoOf(registration.id!);
      expect(photo.status, `photo of ${registration.username}`).toBe(200);
      expect(sha256(photo.body), `photo of ${registration.username}`).toBe(expected[registration.face]);
    }
    // One cut off by the crash made no account, or (saved, the answer lost) a whole one.
    let savedUnanswered = 0;
    for (const registration of inFlight) {
      const check = await new ApiClient(url).post('/api/user/check', { username: registration.username });
      if (!check.data.exists) continue;
      savedUnanswered += 1;
      const id = idOf(dataDir, registration.username);
      expect(sha256((await photoOf(id)).body), `photo of ${registration.username}, saved but unanswered`).toBe(expected[registration.face]);
    }
    // Avatars: each participant has one, whole (the last accepted, or the one on its way at the kill).
    for (const { user } of changers) {
      const avatar = await root.bytes(`/api/user/${user.id}/avatar`);
      expect(avatar.status).toBe(200);
      expect(await sharp(avatar.body).metadata()).toMatchObject({ format: 'webp', width: 512, height: 512 });
    }
    // A deleted participant: nothing left. One whose deletion was cut off: all there, or nothing.
    for (const deletion of deletions) {
      const photo = await photoOf(deletion.id);
      if (deletion.state === 'acknowledged') expect(photo.status, `deleted ${deletion.id}`).toBe(404);
      if (photo.status === 404) expect(blobKeys(dataDir, `users/${deletion.id}/`), `pictures of deleted ${deletion.id}`).toEqual([]);
      else expect(photo.status).toBe(200);
    }

    // No orphan: every picture under users/ is one an account refers to; no note is left; no
    // temporary file of the dead process is left.
    expect(unreferencedPictures(dataDir), 'pictures no account refers to').toEqual([]);
    const db = new Database(join(dataDir, 'identity.sqlite'), { readonly: true, fileMustExist: true });
    try {
      expect(db.prepare('SELECT prefix FROM blob_intents').all()).toEqual([]);
    } finally {
      db.close();
    }
    expect(
      [...storageFiles(dataDir)].filter((path) => isTemporary(path) && leftByTheDead.has(path)),
      'temporary files of the dead process',
    ).toEqual([]);
    await second.stop();

    console.info(
      `crash during registrations: killed ${moment}; ${acknowledged()} acknowledged, ${inFlight.length} cut off (${savedUnanswered} saved but unanswered), ` +
        `${avatarsChanged} avatars changed, ${deletions.filter((deletion) => deletion.state === 'acknowledged').length} deletions acknowledged; ` +
        `${orphansAtTheKill.length} picture(s) no account referred to at the kill, removed at the start: ${orphansAtTheKill.join(', ') || 'none'}`,
    );
  }, 180_000);
});
