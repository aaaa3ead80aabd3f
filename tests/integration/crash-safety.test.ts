import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateFfmpeg } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant, publishedEvents } from '../support/accounts.js';
import { multipartBody } from '../support/hostile.js';
import { cookieOf, isTemporary, portalProcesses, sha256 } from '../support/crash.js';
import { pacedRequest, type PlainAnswer } from '../support/portal-process.js';
import { blobKeys, storageFiles } from '../support/storage-scan.js';
import { makeTestVideo } from '../support/media-fixtures.js';
import { NO_FACE_CHECK, startTestPortal } from '../support/portal.js';

const run = promisify(execFile);
const b64 = (value: string) => Buffer.from(value).toString('base64');
const TUS = { 'tus-resumable': '1.0.0' };

let scratch: string;
const processes = portalProcesses();
const start = processes.start;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'crash-'));
});
afterAll(async () => {
  await processes.killAll();
  rmSync(scratch, { recursive: true, force: true });
});

/** Photos, recordings and videos of a few hundred KB to a few MB, made here with sharp and ffmpeg. */
async function makeMedia(dir: string): Promise<Buffer[]> {
  const ffmpeg = (args: string[]) => run(locateFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { timeout: 60_000 });
  const noise = (width: number, height: number) =>
    sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 85 })
      .toBuffer();
  await Promise.all([
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=25:duration=2',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-qp',
      '0',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      join(dir, 'video.mp4'),
    ]),
    ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=500:duration=30', '-c:a', 'libmp3lame', '-b:a', '128k', join(dir, 'voice.mp3')]),
    ffmpeg(['-f', 'lavfi', '-i', 'anoisesrc=duration=10', '-c:a', 'aac', '-b:a', '256k', join(dir, 'memo.m4a')]),
  ]);
  return [
    await noise(700, 700),
    await noise(1400, 1000),
    readFileSync(join(dir, 'video.mp4')),
    readFileSync(join(dir, 'voice.mp3')),
    await noise(1000, 900),
    readFileSync(join(dir, 'memo.m4a')),
  ];
}

interface Attempt {
  n: number;
  way: 'multipart' | 'resumable';
  title: string;
  bytes: Buffer;
  owner: ApiClient;
  state: 'sending' | 'acknowledged' | 'failed';
  /** Every byte of the file went out (the server may still be filing it). */
  sent: boolean;
  /** The item id the server acknowledged. */
  id?: string;
  /** Where the resumable upload lives, once its creation was acknowledged. */
  location?: string;
}

function itemIdOf(answer: PlainAnswer): string | undefined {
  try {
    const body = JSON.parse(answer.text) as { id?: unknown };
    return typeof body.id === 'string' ? body.id : undefined;
  } catch {
    return undefined;
  }
}

async function sendMultipart(url: string, attempt: Attempt): Promise<string | undefined> {
  const { body, contentType } = multipartBody(
    { title: attempt.title },
    { field: 'file', filename: 'evidence.bin', type: 'application/octet-stream', bytes: attempt.bytes },
  );
  const answer = await pacedRequest(
    new URL('/api/evidence', url).href,
    'POST',
    { 'content-type': contentType, cookie: cookieOf(attempt.owner) },
    body,
    {
      onSent: () => (attempt.sent = true),
    },
  );
  return answer.status === 201 ? itemIdOf(answer) : undefined;
}

/** A resumable upload as the app sends it: created, then PATCHed in chunks (smaller here). */
async function sendResumable(url: string, attempt: Attempt, chunkBytes = 512 * 1024): Promise<string | undefined> {
  const created = await pacedRequest(
    new URL('/api/evidence/uploads', url).href,
    'POST',
    {
      ...TUS,
      cookie: cookieOf(attempt.owner),
      'upload-length': String(attempt.bytes.length),
      'upload-metadata': `title ${b64(attempt.title)}`,
    },
    Buffer.alloc(0),
  );
  if (created.status !== 201) return undefined;
  attempt.location = String(created.headers.location);
  for (let offset = 0; offset < attempt.bytes.length; offset += chunkBytes) {
    const answer = await pacedRequest(
      new URL(attempt.location, url).href,
      'PATCH',
      { ...TUS, cookie: cookieOf(attempt.owner), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      attempt.bytes.subarray(offset, offset + chunkBytes),
      { onSent: () => (attempt.sent = offset + chunkBytes >= attempt.bytes.length) },
    );
    if (answer.status === 200) return itemIdOf(answer);
    if (answer.status !== 204) return undefined;
  }
  return undefined;
}

describe('a crash (kill -9) during 50 concurrent uploads', () => {
  it('keeps every acknowledged upload intact, no unacknowledged one half-made, and no orphan file', async () => {
    const dataDir = join(scratch, 'uploads-data');
    // Ten uploads at once per participant (four by default), so that five participants make the fifty.
    const [media, first] = await Promise.all([makeMedia(scratch), start(dataDir, { UPLOAD_CONCURRENT_PER_PARTICIPANT: '10' })]);
    const owners = await Promise.all(Array.from({ length: 5 }, () => newParticipant(first.url).then(({ client }) => client)));

    const attempts: Attempt[] = Array.from({ length: 50 }, (_, n) => ({
      n,
      way: n % 2 === 0 ? 'multipart' : 'resumable',
      title: `Crash test ${n}`,
      // A few bytes after the end of each file make every upload's bytes its own.
      bytes: Buffer.concat([media[n % media.length]!, randomBytes(16 + n)]),
      owner: owners[n % owners.length]!,
      state: 'sending',
      sent: false,
    }));
    const settled = attempts.map(async (attempt) => {
      try {
        attempt.id = await (attempt.way === 'multipart' ? sendMultipart(first.url, attempt) : sendResumable(first.url, attempt));
        attempt.state = attempt.id ? 'acknowledged' : 'failed';
      } catch {
        attempt.state = 'failed';
      }
    });

    // A registration with a large face photo is on its way too.
    const face = await sharp(randomBytes(1200 * 1000 * 3), { raw: { width: 1200, height: 1000, channels: 3 } })
      .jpeg({ quality: 95 })
      .toBuffer();
    const registration = multipartBody(
      {
        username: 'late_registrant',
        password: 'password1',
        email: 'late@example.org',
        usernameOrEmail: 'late@example.org',
        phone_number: '5551234567',
        full_name: 'Late',
        pronouns: '',
        role: '1',
      },
      { field: 'verification_photo', filename: 'face.jpg', type: 'image/jpeg', bytes: face },
    );
    const registering = pacedRequest(
      new URL('/api/user/register', first.url).href,
      'POST',
      { 'content-type': registration.contentType },
      registration.body,
    ).then(
      (answer) => answer.status,
      () => 0,
    );

    // Once some uploads are acknowledged, the others are somewhere in their transfer or filing.
    await waitFor(() => attempts.filter((attempt) => attempt.state === 'acknowledged').length >= 8, {
      timeoutMs: 60_000,
      what: '8 acknowledged uploads',
    });
    const inFlight = attempts.filter((attempt) => attempt.state === 'sending').length;
    const midTransfer = attempts.filter((attempt) => attempt.state === 'sending' && !attempt.sent).length;
    await first.kill();
    await Promise.all(settled);
    const registered = await registering;
    expect(midTransfer, 'uploads in the middle of their transfer when the process died').toBeGreaterThanOrEqual(10);
    const acknowledged = attempts.filter((attempt) => attempt.state === 'acknowledged');
    // What the dead process left half-written; the new process writes temporary files of its own
    // (its media jobs run while this test looks), which are not the question here.
    const leftByTheDead = new Set([...storageFiles(dataDir)].filter(isTemporary));

    const second = await start(dataDir);
    const url = second.url;
    // Sessions are on disk too: the same participants, the same cookies.
    const owner = (attempt: Attempt) => {
      const client = new ApiClient(url);
      for (const [name, value] of attempt.owner.cookies) client.cookies.set(name, value);
      return client;
    };
    const expectIntact = async (attempt: Attempt, id: string) => {
      const item = await owner(attempt).get(`/api/evidence/item/${id}`);
      expect(item.status, `item of upload ${attempt.n}`).toBe(200);
      expect(item.data.title).toBe(attempt.title);
      const original = await owner(attempt).bytes(`/media/evidence/${id}/original`);
      expect(original.status, `original of upload ${attempt.n}`).toBe(200);
      expect(sha256(original.body), `bytes of upload ${attempt.n}`).toBe(sha256(attempt.bytes));
    };

    // Every acknowledged upload is there, byte for byte.
    for (const attempt of acknowledged) await expectIntact(attempt, attempt.id!);

    // An unacknowledged upload has no item, except where the process died after filing it and
    // before the answer left (the client cannot tell: a multipart client finds it in its list, a
    // resumable one is told by HEAD). Such an item is complete; none is half-made.
    let filedButUnanswered = 0;
    let resumed = 0;
    let filedWhenAsked = 0;
    const lists = new Map<ApiClient, { title: string; id: string }[]>();
    for (const client of owners) lists.set(client, (await owner({ owner: client } as Attempt).get('/api/evidence?limit=100')).data);
    for (const attempt of attempts.filter((candidate) => candidate.state === 'failed')) {
      const listed = lists.get(attempt.owner)!.filter((item) => item.title === attempt.title);
      expect(listed.length, `items of upload ${attempt.n}`).toBeLessThanOrEqual(1);
      if (attempt.way === 'multipart' || !attempt.location) {
        if (listed[0]) {
          filedButUnanswered += 1;
          await expectIntact(attempt, listed[0].id);
        }
        continue;
      }
      // A resumable upload goes on from where the server has it, and completes. One whose last
      // byte arrived but which was not filed yet is filed when its owner asks (HEAD).
      const client = owner(attempt);
      const head = await client.request('HEAD', attempt.location, { headers: TUS });
      expect(head.status, `HEAD of upload ${attempt.n}`).toBe(200);
      const offset = Number(head.headers.get('upload-offset'));
      let id = head.headers.get('x-evidence-id') ?? undefined;
      if (listed[0]) {
        expect(id, `upload ${attempt.n} is complete`).toBe(listed[0].id);
        filedButUnanswered += 1;
      } else if (id) {
        expect(offset).toBe(attempt.bytes.length);
        filedWhenAsked += 1;
      } else {
        const rest = await fetch(new URL(attempt.location, url), {
          method: 'PATCH',
          headers: { ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', cookie: cookieOf(client) },
          body: new Uint8Array(attempt.bytes.subarray(offset)),
        });
        expect(rest.status, `the rest of upload ${attempt.n} (from ${offset} of ${attempt.bytes.length})`).toBe(200);
        id = ((await rest.json()) as { id: string }).id;
        resumed += 1;
      }
      await expectIntact(attempt, id!);
    }

    // No orphan: every blob under evidence/ belongs to an item, at its current revision, and no
    // temporary file of the dead process is left.
    const admin = (await adminClient(url)).client;
    const exists = new Map<string, boolean>();
    for (const key of blobKeys(dataDir, 'evidence/')) {
      const [, id, revision] = key.split('/');
      if (!exists.has(id!)) exists.set(id!, (await admin.get(`/api/evidence/item/${id}`)).status === 200);
      expect(exists.get(id!), `the item of blob ${key}`).toBe(true);
      expect(revision, key).toBe('r1');
    }
    // The registration cut off by the crash made no account (or, had it been answered, a whole one).
    const check = await new ApiClient(url).post('/api/user/check', { username: 'late_registrant' });
    expect(check.data.exists).toBe(registered === 201);
    const temporary = [...storageFiles(dataDir)].filter((path) => isTemporary(path) && leftByTheDead.has(path));
    expect(temporary, 'temporary files of the dead process').toEqual([]);
    await second.stop();

    // What is left of unfinished resumable uploads (a creation whose answer never came back) is
    // removed by the expiry: here a start with a very short one.
    const third = await startTestPortal({ ...NO_FACE_CHECK, UPLOAD_EXPIRY_HOURS: '0.0001' }, dataDir);
    try {
      await waitFor(() => [...storageFiles(dataDir)].filter((path) => path.startsWith('uploads/')).length === 0, {
        timeoutMs: 10_000,
        what: 'expired uploads removed',
      });
    } finally {
      await third.dispose();
    }
    console.info(
      `crash during uploads: ${acknowledged.length} acknowledged, ${inFlight} in flight at the kill (${midTransfer} mid-transfer), ${resumed} resumed after it, ${filedWhenAsked} complete but filed only when asked, ${filedButUnanswered} filed but unanswered`,
    );
  }, 180_000);
});

describe('a crash (kill -9) while an administrator makes everything public', () => {
  it('leaves every item public or every item private, and the repeated operation completes and is announced once', async () => {
    const dataDir = join(scratch, 'visibility-data');
    const first = await start(dataDir);
    const { user } = await newParticipant(first.url);
    // A festival's worth of notes, written straight into the evidence database in one
    // transaction (through the API this takes a minute on a small machine); the portal reads them
    // like any others.
    const ITEMS = 3000;
    const seed = new Database(join(dataDir, 'evidence.sqlite'));
    try {
      const insert = seed.prepare(
        `INSERT INTO evidence (id, user_id, username, title, notes, media_type, is_public, date_posted, updated_at, media_status, media_revision)
         VALUES (?, ?, ?, ?, 'seen on the corner', 1, 0, ?, ?, 'none', 0)`,
      );
      seed.transaction(() => {
        for (let n = 0; n < ITEMS; n++) {
          const posted = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
          insert.run(randomUUID(), user.id, user.username, `Note ${n}`, posted, posted);
        }
      })();
    } finally {
      seed.close();
    }
    const admin = (await adminClient(first.url)).client;

    // The portal at rest first: the write-ahead log of the evidence database folded back into it
    // (the service empties it every 2 s). From then on the log grows only with the change itself.
    const wal = join(dataDir, 'evidence.sqlite-wal');
    const walSize = () => statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    await waitFor(() => walSize() === 0, { timeoutMs: 10_000, what: 'the write-ahead log emptied' });

    // The request goes out; the process dies once the database is writing the change (pages of
    // it in the log, not committed yet), or else when the answer arrives.
    let answered = false;
    const request = admin.put('/api/evidence/makeAllPublic').then(
      (response) => ((answered = response.status === 200), response),
      () => null,
    );
    await waitFor(() => answered || walSize() > 64 * 1024, { timeoutMs: 30_000, intervalMs: 1, what: 'the change to be written' });
    const landed = answered ? 'after the answer' : `while the change was written (log at ${walSize()} bytes), before the answer`;
    await first.kill();
    await request;
    const counts = () => {
      const db = new Database(join(dataDir, 'evidence.sqlite'), { readonly: true });
      try {
        return db.prepare('SELECT is_public, COUNT(*) AS n FROM evidence GROUP BY is_public').all() as { is_public: number; n: number }[];
      } finally {
        db.close();
      }
    };
    const second = await startTestPortal(NO_FACE_CHECK, dataDir);
    try {
      // All or nothing: one transaction.
      const after = counts();
      expect(after, 'every item public, or every item private').toHaveLength(1);
      expect(after[0]!.n).toBe(ITEMS);
      const wasApplied = after[0]!.is_public === 1;
      if (answered) expect(wasApplied, 'an answered change stays').toBe(true);

      // The list answers agree with the state.
      const again = (await adminClient(second.url)).client;
      const publicPage = await new ApiClient(second.url).get('/api/evidence/public?limit=50');
      expect(publicPage.status).toBe(200);
      expect(publicPage.data).toHaveLength(wasApplied ? 50 : 0);
      const adminPage = await again.get('/api/evidence/admin');
      expect(adminPage.status).toBe(200);
      expect(adminPage.data.every((item: { is_public: boolean }) => item.is_public === wasApplied)).toBe(true);

      // The operation can be repeated, and completes.
      const repeated = await again.put('/api/evidence/makeAllPublic');
      expect(repeated.status).toBe(200);
      expect(repeated.data.changed).toBe(wasApplied ? 0 : ITEMS);
      expect(counts()).toEqual([{ is_public: 1, n: ITEMS }]);
      expect((await new ApiClient(second.url).get('/api/evidence/public?limit=50')).data).toHaveLength(50);

      // The events agree: every item's change announced exactly once, over the crash and the repeat.
      const announced = () => {
        const events = new Map<string, number>();
        for (const { value } of publishedEvents(dataDir)) {
          if (value.type === 'evidence.visibility-changed' && value.data.evidenceId === null && value.data.is_public === true) {
            events.set(value.id, Number(value.data.changed));
          }
        }
        return [...events.values()].reduce((sum, changed) => sum + changed, 0);
      };
      await waitFor(() => announced() >= ITEMS, { timeoutMs: 10_000, what: 'the change announced' });
      expect(announced()).toBe(ITEMS);
      console.info(`crash during make-all-public on ${ITEMS} items: killed ${landed}; the change had ${wasApplied ? '' : 'not '}been made`);
    } finally {
      await second.dispose();
    }
  }, 120_000);
});

describe("a crash (kill -9) between a video's two display copies", () => {
  it('after the remuxed copy is ready and before the 720p copy: on restart the 720p job completes and replaces it', async () => {
    const dataDir = join(scratch, 'two-copies-data');
    // A phone's video (1080p H.264 + AAC in MP4) long enough that its 720p transcode takes a while.
    const file = await makeTestVideo(join(scratch, 'phone-10s.mp4'), { size: '1920x1080', rate: 30, seconds: 10 });
    // Short job locks, so that the dead worker's job is given back soon after the restart.
    const env = { ...NO_FACE_CHECK, MEDIA_JOB_LOCK_MS: '2000', MEDIA_TRANSCODE_POLICY: 'playable-first' };
    const first = await start(dataDir, env);
    const { client } = await newParticipant(first.url);
    const created = await client.postForm(
      '/api/evidence',
      (() => {
        const form = new FormData();
        form.set('title', 'Street corner');
        form.set('file', new Blob([new Uint8Array(readFileSync(file))], { type: 'video/mp4' }), 'street.mp4');
        return form;
      })(),
    );
    expect(created.status).toBe(201);
    const id = created.data.id as string;
    const item = () =>
      client
        .get(`/api/evidence/item/${id}`)
        .then((answer) => answer.data as { media_status: string; aws_url: string | null; width: number | null; poster_url: string | null });
    await waitFor(async () => (await item()).media_status === 'ready', { timeoutMs: 60_000, what: 'the remuxed copy ready' });
    const ready = await item();
    expect(ready.aws_url).toBe(`/media/evidence/${id}/display?v=1-remuxed`);
    expect(ready.poster_url).not.toBeNull();
    const remuxed = await client.bytes(ready.aws_url!);
    expect(remuxed.status).toBe(200);
    await first.kill();

    // Killed before the 720p copy was filed: the item still names the remuxed copy, and its 720p
    // job is in the queue (running when the process died, or waiting).
    const db = new Database(join(dataDir, 'evidence.sqlite'), { readonly: true });
    const displayKey = (db.prepare('SELECT display_key FROM evidence WHERE id = ?').get(id) as { display_key: string }).display_key;
    db.close();
    expect(displayKey).toBe(`evidence/${id}/r1/display-remuxed.mp4`);
    const jobs = new Database(join(dataDir, 'jobs.sqlite'), { readonly: true });
    const job = jobs.prepare('SELECT state FROM jobs WHERE id = ?').get(`${id}.r1.720p`) as { state: string } | undefined;
    jobs.close();
    expect(['active', 'waiting']).toContain(job?.state);

    const second = await startTestPortal({ ...NO_FACE_CHECK, ...env }, dataDir);
    try {
      const again = new ApiClient(second.url);
      for (const [name, value] of client.cookies) again.cookies.set(name, value);
      const current = () =>
        again.get(`/api/evidence/item/${id}`).then((answer) => answer.data as { aws_url: string; width: number; height: number });
      await waitFor(async () => (await current()).aws_url === `/media/evidence/${id}/display?v=1`, {
        timeoutMs: 150_000,
        intervalMs: 500,
        what: 'the 720p copy swapped in',
      });
      expect(await current()).toMatchObject({ width: 1280, height: 720 });
      const transcoded = await again.bytes(`/media/evidence/${id}/display?v=1`);
      expect(transcoded.status).toBe(200);
      const saved = join(scratch, 'swapped.mp4');
      writeFileSync(saved, transcoded.body);
      const { stdout } = await run(locateFfmpeg().ffmpeg.replace(/ffmpeg$/, 'ffprobe'), [
        '-v',
        'error',
        '-select_streams',
        'v:0',
        '-show_entries',
        'stream=width,height',
        '-of',
        'csv=p=0',
        saved,
      ]);
      expect(stdout.trim()).toBe('1280,720');
      // A player still on the first copy's URL gets the first copy's bytes, whole.
      const old = await again.bytes(ready.aws_url!);
      expect(old.status).toBe(200);
      expect(sha256(old.body)).toBe(sha256(remuxed.body));
    } finally {
      await second.dispose();
    }
  }, 300_000);
});

describe('a resumable upload whose last byte was stored when the process died', () => {
  it('is filed when its owner asks about it, once', async () => {
    const portal = await startTestPortal(NO_FACE_CHECK);
    try {
      const { client } = await newParticipant(portal.url);
      const photo = await sharp(randomBytes(300 * 200 * 3), { raw: { width: 300, height: 200, channels: 3 } })
        .jpeg()
        .toBuffer();
      const created = await client.request('POST', '/api/evidence/uploads', {
        headers: { ...TUS, 'upload-length': String(photo.length), 'upload-metadata': `title ${b64('Stored, not filed')}` },
      });
      expect(created.status).toBe(201);
      const location = created.headers.get('location')!;
      // Every byte stored where the upload keeps them, as a PATCH does, and no item made: the
      // state a process leaves that died between storing the last byte and filing the item.
      writeFileSync(join(portal.dataDir, 'uploads', location.split('/').at(-1)!), photo);
      expect((await client.get('/api/evidence')).data).toEqual([]);

      // Someone else asking files nothing.
      const other = await newParticipant(portal.url);
      expect((await other.client.request('HEAD', location, { headers: TUS })).headers.get('x-evidence-id')).toBeNull();

      const head = await client.request('HEAD', location, { headers: TUS });
      expect(head.status).toBe(200);
      expect(head.headers.get('upload-offset')).toBe(String(photo.length));
      const id = head.headers.get('x-evidence-id')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await client.request('HEAD', location, { headers: TUS })).headers.get('x-evidence-id')).toBe(id);
      const items = (await client.get('/api/evidence')).data as { id: string; title: string }[];
      expect(items.map((item) => [item.id, item.title])).toEqual([[id, 'Stored, not filed']]);
      expect(sha256((await client.bytes(`/media/evidence/${id}/original`)).body)).toBe(sha256(photo));
      expect([...storageFiles(portal.dataDir)].filter((path) => path.startsWith('uploads/'))).toEqual([]);
    } finally {
      await portal.dispose();
    }
  });
});
