import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_QUEUES } from '@portal/contracts';
import { probeMedia } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, makeTestVideo, type MediaFixtures } from '../support/media-fixtures.js';
import { codeIn, readOutbox, waitForMail } from '../support/outbox.js';
import { TEST_ADMIN, NO_FACE_CHECK } from '../support/portal.js';
import { rawRequest } from '../support/raw-http.js';
import { startDistributedPortal, type DistributedPortal } from '../support/distributed-portal.js';

const run = promisify(execFile);

interface CollectedSpan {
  service: string;
  traceId: string;
  name: string;
  kind: number;
  attributes: string;
}

/** A minimal OTLP/HTTP (JSON) trace collector: keeps every span it is sent. */
async function startTraceCollector() {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      try {
        const payload = JSON.parse(body) as {
          resourceSpans?: {
            resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
            scopeSpans?: { spans?: { traceId: string; name: string; kind: number; attributes?: unknown }[] }[];
          }[];
        };
        for (const resourceSpans of payload.resourceSpans ?? []) {
          const service =
            resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '?';
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: span.traceId,
                name: span.name,
                kind: span.kind,
                attributes: JSON.stringify(span.attributes ?? []),
              });
            }
          }
        }
      } catch {
        // not JSON: ignored
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
const SERVERS_SCRIPT = fileURLToPath(new URL('../../infra/local/servers.sh', import.meta.url));

let portal: DistributedPortal;
let collector: { url: string; spans: () => CollectedSpan[]; close: () => Promise<void> };
let fixtures: MediaFixtures;
let scratch: string;
let longVideo: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'distributed-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
  // A video that takes the worker several seconds: long enough to kill it in the middle.
  longVideo = await makeTestVideo(join(scratch, 'long.mp4'), { size: '1920x1080', rate: 30, seconds: 10, tone: 300 });
  collector = await startTraceCollector();
  portal = await startDistributedPortal({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_RATE_LIMITS: 'false',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    MEDIA_JOB_LOCK_MS: '4000',
    // About Kafka's restart and a worker killed mid-job, not faces (tests/e2e/faces.test.ts proves
    // them on these servers): the 10 s video's face check would only add CPU.
    ...NO_FACE_CHECK,
    // Short, for the stalled-body test; every other body here flows without a pause.
    UPLOAD_IDLE_TIMEOUT_MS: '3000',
  });
}, 240_000);

afterAll(async () => {
  await portal?.dispose();
  await collector?.close();
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

  it('takes a resumable upload in chunks kept in S3, resumed after a pause, and makes one item of it', async () => {
    const { client } = await newParticipant(portal.url);
    const video = readFileSync(fixtures.phoneMp4);
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const tus = { 'tus-resumable': '1.0.0', cookie };
    const created = await fetch(`${portal.url}/api/evidence/uploads`, {
      method: 'POST',
      headers: {
        ...tus,
        'upload-length': String(video.length),
        'upload-metadata': `title ${Buffer.from('Chunked in S3').toString('base64')}`,
      },
    });
    expect(created.status).toBe(201);
    const location = new URL(created.headers.get('location')!, portal.url).toString();
    // The S3 store needs parts of at least 5 MB except the last: send the file in two requests.
    const half = Math.min(video.length - 1, Math.max(Math.floor(video.length / 2), 5 * 1024 * 1024));
    const first = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(video.subarray(0, half)),
    });
    expect([204, 200]).toContain(first.status);
    const head = await fetch(location, { method: 'HEAD', headers: tus });
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeGreaterThan(0);
    const last = await fetch(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(video.subarray(offset)),
    });
    expect(last.status).toBe(200);
    const item = (await last.json()) as { id: string; media_type: number };
    expect(item.media_type).toBe(3);
    const ready = await waitForMedia(client, item.id, 120_000);
    expect(ready.media_status).toBe('ready');
    expect(Buffer.compare((await client.bytes(`/media/evidence/${item.id}/original`)).body, video)).toBe(0);
  });

  it("guards bodies at the gateway process: 413 before reading, 408 for a stalled chunk (what came stays in S3), a participant's unfinished uploads within their share", async () => {
    const { client } = await newParticipant(portal.url);
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const tus = { 'tus-resumable': '1.0.0', cookie };
    const create = (length: number) =>
      rawRequest(`${portal.url}/api/evidence/uploads`, {
        method: 'POST',
        headers: {
          ...tus,
          'upload-length': String(length),
          'upload-metadata': `title ${Buffer.from('Guarded').toString('base64')}`,
          'content-length': '0',
        },
        body: '',
      });
    const refused = await rawRequest(`${portal.url}/api/evidence`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'multipart/form-data; boundary=b', 'content-length': '4000000000', expect: '100-continue' },
    });
    expect(refused.status, refused.body).toBe(413);
    expect(refused.continued).toBe(false);

    const stalledUpload = await create(300 * 1024);
    expect(stalledUpload.status, stalledUpload.body).toBe(201);
    const location = `${portal.url}${stalledUpload.headers.location}`;
    const stalled = await rawRequest(location, {
      method: 'PATCH',
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': String(300 * 1024) },
      partial: Buffer.alloc(100 * 1024, 3),
    });
    expect(stalled.status, stalled.body).toBe(408);
    await waitFor(
      async () => {
        const head = await fetch(location, { method: 'HEAD', headers: tus });
        return Number(head.headers.get('upload-offset')) === 100 * 1024 || null;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'the stalled chunk kept in S3' },
    );
    expect((await fetch(location, { method: 'DELETE', headers: tus })).status).toBe(204);

    // The default share: twice the largest evidence file (1 GiB).
    const gib = 1024 ** 3;
    const first = await create(gib);
    expect(first.status, first.body).toBe(201);
    const second = await create(gib);
    expect(second.status).toBe(201);
    const over = await create(1);
    expect(over.status, over.body).toBe(413);
    expect(JSON.parse(over.body).message).toMatch(/unfinished uploads already hold 2 GB/);
    const cancel = (answer: { headers: { location?: string } }) =>
      fetch(`${portal.url}${answer.headers.location}`, { method: 'DELETE', headers: tus });
    expect((await cancel(first)).status).toBe(204);
    const third = await create(1);
    expect(third.status).toBe(201);
    for (const upload of [second, third]) expect((await cancel(upload)).status).toBe(204);
  });

  it('sends the reset code through Kafka, the notifier and SMTP, and the new password works', async () => {
    const { user } = await newParticipant(portal.url);
    const visitor = new ApiClient(portal.url);
    expect((await visitor.post('/api/email/send', { email: user.email })).status).toBe(200);
    const mail = await waitForMail(portal.dataDir, user.email, { subject: /reset code/ });
    const code = codeIn(mail);
    expect((await visitor.put('/api/user/passwordupdated', { email: user.email, code, password: 'distributed-pass' })).status).toBe(200);
    expect((await visitor.post('/api/user/login', { username: user.username, password: 'distributed-pass' })).status).toBe(200);
    // The owner is told, at the account's address; then a change of address (with the password) tells the old one.
    expect((await waitForMail(portal.dataDir, user.email, { subject: /password was changed/ })).text).toContain(
      'Your password was changed',
    );
    const moved = `moved_${user.username}@example.org`;
    const change = { email: moved, phone_number: '5551234567', pronouns: '' };
    expect((await visitor.put('/api/evidence/user', change)).status).toBe(400);
    expect((await visitor.put('/api/evidence/user', { ...change, current_password: 'distributed-pass' })).status).toBe(200);
    expect((await waitForMail(portal.dataDir, user.email, { subject: /e-mail address was changed/ })).text).toContain(moved);
  });

  it("removes a deleted participant's evidence through Kafka, and ends their session at once", async () => {
    const owner = await newParticipant(portal.url);
    const note = await owner.client.post('/api/evidence', { title: 'Soon gone', notes: '' });
    const { client: admin } = await adminClient(portal.url);
    expect((await admin.delete(`/api/user/${owner.user.id}`)).status).toBe(200);
    expect((await owner.client.get('/api/user')).status).toBe(401);
    await waitFor(async () => (await admin.get(`/api/evidence/item/${note.data.id}`)).status === 404, {
      timeoutMs: 30_000,
      what: 'the item to go',
    });
  });

  it('loses nothing when the media worker is killed in the middle of a video job', async () => {
    const { client } = await newParticipant(portal.url);
    const created = await uploadEvidence(client, longVideo, { title: 'Long video' });
    expect(created.status).toBe(201);
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      // The job is being worked on...
      await waitFor(async () => (await redis.llen(`${portal.namespace}:${MEDIA_QUEUES.av}:active`)) > 0, {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: 'the job to start',
      });
    } finally {
      redis.disconnect();
    }
    // ...when its worker dies outright.
    await portal.kill('media-worker');
    expect((await client.get(`/api/evidence/item/${created.data.id}`)).data.media_status).toBe('processing');
    await portal.start('media-worker');
    const item = await waitForMedia(client, created.data.id, 180_000);
    expect(item.media_status).toBe('ready');
    expect(item.duration).toBeGreaterThan(9);
  });

  it('every service exposes Prometheus metrics: latency, queue depth, job durations, consumer lag, e-mails', async () => {
    const text = async (service: Parameters<DistributedPortal['serviceUrl']>[0]) => {
      const response = await fetch(`${portal.serviceUrl(service)}/metrics`);
      expect(response.status, service).toBe(200);
      return response.text();
    };
    const identity = await text('identity');
    expect(identity).toMatch(/portal_http_request_duration_seconds_bucket\{[^}]*route="\/api\/user\/login"/);
    expect(identity).toContain('process_cpu_seconds_total');
    // Every consumer group's lag in one metric, the audit log's included.
    expect(identity).toMatch(/portal_consumer_lag\{[^}]*group="identity.audit",topic="audit.entries"/);
    const evidence = await text('evidence');
    expect(evidence).toMatch(/portal_consumer_lag\{[^}]*group="evidence",topic="identity.users"/);
    expect(evidence).toMatch(/portal_consumer_lag\{[^}]*group="evidence.media-results",topic="media.results"/);
    const worker = await text('media-worker');
    // One gauge per media queue: stills, audio/video, and the queue from before the split.
    for (const queue of ['media_stills', 'media_av', 'media'])
      expect(worker).toMatch(new RegExp(`portal_jobs_${queue}\\{[^}]*state="completed"`));
    expect(worker).toMatch(/portal_job_duration_seconds_count\{[^}]*queue="media-(stills|av)",outcome="completed"/);
    // How long each queue's oldest waiting job has waited (none waits now: 0), the 720p copies' too.
    for (const queue of ['media-stills', 'media-av', 'media-av-720p'])
      expect(worker).toMatch(new RegExp(`portal_job_oldest_waiting_seconds\\{queue="${queue}"[^}]*\\} 0\n`));
    const notifier = await text('notifier');
    expect(notifier).toMatch(/portal_emails_sent_total\{[^}]*kind="reset-code"[^}]*\} [1-9]/);
    expect(notifier).toMatch(/portal_consumer_lag\{[^}]*group="notifier",/);
    expect(notifier).toMatch(/portal_consumer_lag\{[^}]*group="notifier-appointments",/);
    const gateway = await text('gateway-metrics');
    expect(gateway).toMatch(/portal_http_request_duration_seconds_count\{[^}]*route="\/api\/user\/\*"/);
    // Metrics never leave through the public port.
    expect((await fetch(`${portal.url}/metrics`)).headers.get('content-type')).not.toContain('text/plain; version=0.0.4');
  });

  it('follows one request in one trace: gateway, identity, Kafka, the notifier and its mail job', async () => {
    const { user } = await newParticipant(portal.url);
    const response = await new ApiClient(portal.url).request('POST', '/api/email/send', { json: { email: user.email } });
    expect(response.status).toBe(200);
    await waitForMail(portal.dataDir, user.email, { subject: /reset code/ });
    const trace = await waitFor(
      () => {
        const root = collector
          .spans()
          .find((span) => span.service === 'gateway' && span.kind === 2 && /\/api\/email\/send/.test(span.attributes));
        if (!root) return null;
        const inTrace = collector.spans().filter((span) => span.traceId === root.traceId);
        const services = new Set(inTrace.map((span) => span.service));
        return services.has('identity') && services.has('notifier') && inTrace.some((span) => span.name === 'mail job') ? inTrace : null;
      },
      { timeoutMs: 30_000, what: 'the spans of the request in every service' },
    );
    expect(trace.map((span) => span.name)).toEqual(expect.arrayContaining(['identity.password-resets process', 'mail job']));
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
    // Liveness, not speed: after the broker is back, the producers reconnect with backoff and the
    // consumer groups wait for their coordinator to load, which on a busy two-core machine has
    // taken over a minute. Should a mail never come, the services' Kafka lines say why.
    try {
      for (const { user } of people) {
        await waitForMail(portal.dataDir, user.email, { subject: /reset code/, count: 3, timeoutMs: 150_000 });
      }
    } catch (error) {
      for (const service of ['identity', 'notifier'] as const) {
        const lines = portal
          .logs(service)
          .split('\n')
          .filter((line) => /kafka|mail/i.test(line) && !line.includes('ECONNREFUSED'));
        console.error(`${service}'s Kafka and mail log lines:\n${lines.join('\n')}`);
      }
      throw error;
    }
    // Give redeliveries (if any) time to show up, then count.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const mails = await readOutbox(portal.dataDir);
    for (const { user } of people) {
      const resets = mails.filter((mail) => mail.to.includes(user.email) && /reset code/.test(mail.subject));
      expect(resets.length, user.email).toBe(3);
      expect(new Set(resets.map((mail) => mail.messageId)).size).toBe(3);
    }
  }, 420_000);
});
