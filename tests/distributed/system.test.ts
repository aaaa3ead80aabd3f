import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateFfmpeg, probeMedia } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { codeIn, readOutbox, waitForMail } from '../support/outbox.js';
import { TEST_ADMIN } from '../support/portal.js';
import { startDistributedPortal, type DistributedPortal } from '../support/distributed-portal.js';

const run = promisify(execFile);
const SERVERS_SCRIPT = fileURLToPath(new URL('../../infra/local/servers.sh', import.meta.url));

let portal: DistributedPortal;
let fixtures: MediaFixtures;
let scratch: string;
let longVideo: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'distributed-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
  // A video that takes the worker several seconds: long enough to kill it in the middle.
  longVideo = join(scratch, 'long.mp4');
  await run(locateFfmpeg().ffmpeg, [
    '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30:duration=20',
    '-f', 'lavfi', '-i', 'sine=frequency=300:duration=20', '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', longVideo,
  ]);
  portal = await startDistributedPortal({
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_RATE_LIMITS: 'false',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    MEDIA_JOB_LOCK_MS: '4000',
  });
}, 240_000);

afterAll(async () => {
  await portal?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the portal as five processes on Kafka, MongoDB, Redis, S3 and SMTP', () => {
  it('registers, logs in, and has a video processed by the separate worker, served from S3 with ranges', async () => {
    const { client, user } = await newParticipant(portal.url);
    expect((await client.get('/api/user')).data.id).toBe(user.id);
    const created = await uploadEvidence(client, fixtures.phoneMp4, { title: 'Distributed video' });
    expect(created.status).toBe(201);
    const item = await waitForMedia(client, created.data.id, 120_000);
    expect(item.media_status).toBe('ready');
    const video = await client.bytes(item.aws_url!);
    expect(video.headers.get('content-type')).toBe('video/mp4');
    const path = join(scratch, 'served.mp4');
    writeFileSync(path, video.body);
    expect((await probeMedia(path)).streams.map((stream) => stream.codec_name).sort()).toEqual(['aac', 'h264']);
    const partial = await client.request('GET', item.aws_url!, { headers: { range: 'bytes=0-99' } });
    expect(partial.status).toBe(206);
  });

  it('sends the reset code through Kafka, the notifier and SMTP, and the new password works', async () => {
    const { user } = await newParticipant(portal.url);
    const visitor = new ApiClient(portal.url);
    expect((await visitor.post('/api/email/send', { email: user.email })).status).toBe(200);
    const mail = await waitForMail(portal.dataDir, user.email, { subject: /reset code/ });
    const code = codeIn(mail);
    expect((await visitor.put('/api/user/passwordupdated', { email: user.email, code, password: 'distributed-pass' })).status).toBe(200);
    expect((await visitor.post('/api/user/login', { username: user.username, password: 'distributed-pass' })).status).toBe(200);
  });

  it("removes a deleted participant's evidence through Kafka, and ends their session at once", async () => {
    const owner = await newParticipant(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Soon gone', notes: '' });
    const { client: admin } = await adminClient(portal.url);
    expect((await admin.delete(`/api/user/${owner.user.id}`)).status).toBe(200);
    expect((await owner.client.get('/api/user')).status).toBe(401);
    await waitFor(async () => (await admin.get(`/api/evidence/item/${note.data.id}`)).status === 404, { timeoutMs: 30_000, what: 'the item to go' });
  });

  it('loses nothing when the media worker is killed in the middle of a video job', async () => {
    const { client } = await newParticipant(portal.url);
    const created = await uploadEvidence(client, longVideo, { title: 'Long video' });
    expect(created.status).toBe(201);
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      // The job is being worked on...
      await waitFor(async () => (await redis.llen(`${portal.namespace}:media:active`)) > 0, { timeoutMs: 60_000, intervalMs: 50, what: 'the job to start' });
    } finally {
      redis.disconnect();
    }
    // ...when its worker dies outright.
    await portal.kill('media-worker');
    expect((await client.get(`/api/evidence/item/${created.data.id}`)).data.media_status).toBe('processing');
    await portal.start('media-worker');
    const item = await waitForMedia(client, created.data.id, 180_000);
    expect(item.media_status).toBe('ready');
    expect(item.duration).toBeGreaterThan(19);
  });

  it('restarting the Kafka broker while events flow: every e-mail arrives, and only once', async () => {
    const people = await Promise.all(Array.from({ length: 4 }, () => newParticipant(portal.url)));
    const visitor = new ApiClient(portal.url);
    const restart = run('bash', [SERVERS_SCRIPT, 'restart', 'kafka'], { timeout: 180_000 });
    for (let round = 0; round < 3; round++) {
      for (const { user } of people) expect((await visitor.post('/api/email/send', { email: user.email })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    await restart;
    for (const { user } of people) {
      await waitForMail(portal.dataDir, user.email, { subject: /reset code/, count: 3 });
    }
    // Give redeliveries (if any) time to show up, then count.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const mails = await readOutbox(portal.dataDir);
    for (const { user } of people) {
      const resets = mails.filter((mail) => mail.to.includes(user.email) && /reset code/.test(mail.subject));
      expect(resets.length, user.email).toBe(3);
      expect(new Set(resets.map((mail) => mail.messageId)).size).toBe(3);
    }
  });
});

