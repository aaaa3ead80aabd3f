import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { MEDIA_QUEUES, TOPICS, type AdminAppointment, type AuditEntry } from '@portal/contracts';
import { S3BlobStore } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, makeTestVideo, type MediaFixtures } from '../support/media-fixtures.js';
import { readMailApi } from '../support/outbox.js';
import {
  deadLetters,
  metric,
  outage,
  printFigures,
  readiness,
  startOutageRig,
  waitForCheck,
  whilePaused,
  type OutageRig,
} from '../support/outages.js';

// Nothing lost while Kafka, S3 or the mail server is away (issue 29), on real servers of this file's
// own. Kafka away for 5 minutes while a video transcodes: the item ends ready, ffmpeg transcoded it
// once (its result waited in the media worker's outbox), and a gateway and an evidence service
// started meanwhile serve at once and consume once Kafka is back, without a restart. S3 away while
// a photo waits for the worker and a deleted participant's files wait to be erased; the mail server
// away while e-mails and appointment confirmations wait. Before, the video was transcoded three
// times and ended failed, the services crash-looped, the media job spent its tries in seconds.

const KAFKA_AWAY_MS = 5 * 60_000;
const S3_AWAY_MS = 90_000;
const SMTP_AWAY_MS = 90_000;

let rig: OutageRig;
let admin: Awaited<ReturnType<typeof adminClient>>;
let scratch: string;
let fixtures: MediaFixtures;
let video: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'outage-media-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
  // A video every copy of which is transcoded (MEDIA_TRANSCODE_POLICY=always): 1080p, 12 seconds.
  video = await makeTestVideo(join(scratch, 'clip.mp4'), { size: '1920x1080', rate: 30, seconds: 12, tone: 330 });
  rig = await startOutageRig({ MEDIA_TRANSCODE_POLICY: 'always' });
  admin = await adminClient(rig.portal.url);
}, 300_000);
afterAll(async () => {
  await rig?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 120_000);

const transcodes = () => metric(rig.portal, 'media-worker', 'portal_media_ffmpeg_runs_total', { kind: 'transcode' });
const jobs = (queue: string, outcome: string) =>
  metric(rig.portal, 'media-worker', 'portal_job_duration_seconds_count', { queue, outcome });

describe('Kafka, S3 and the mail server away for longer than any retry budget: nothing lost, nothing done twice', () => {
  it(
    'Kafka away for 5 minutes during a transcode: ready after, ffmpeg ran once; gateway and evidence started meanwhile need no restart',
    async () => {
      const { portal, servers } = rig;
      const owner = await newParticipant(portal.url);
      const created = await uploadEvidence(owner.client, video, { title: 'Filmed at the corner' });
      expect(created.status).toBe(201);
      const id = created.data.id as string;
      // The transcode runs (its poster is out already, before Kafka goes)...
      const redis = new Redis(servers.env.REDIS_URL!);
      try {
        await waitFor(async () => (await redis.llen(`${portal.namespace}:${MEDIA_QUEUES.av}:active`)) > 0, {
          timeoutMs: 60_000,
          intervalMs: 50,
          what: 'the transcode to start',
        });
      } finally {
        redis.disconnect();
      }
      await waitFor(async () => (await owner.client.get(`/api/evidence/item/${id}`)).data.poster_url !== null, {
        timeoutMs: 60_000,
        what: 'the poster, announced before the transcode',
      });
      // ...and Kafka goes away before it ends (the worker held still meanwhile, so that it cannot finish first).
      let late: Awaited<ReturnType<typeof newParticipant>> | undefined;
      let note: { id: string } | undefined;
      const { down, back } = await outage(rig, 'kafka', KAFKA_AWAY_MS, async () => {
        portal.resume('media-worker');
        // The transcode finishes; its result waits in the worker's outbox, tried again with no try of the job spent.
        await waitFor(async () => (await jobs('media-results', 'postponed')) > 0, {
          timeoutMs: 180_000,
          what: 'the result to wait for Kafka',
        });
        await waitFor(async () => (await jobs(MEDIA_QUEUES.av, 'completed')) === 1, {
          timeoutMs: 180_000,
          what: 'the transcode to complete',
        });
        expect(await jobs(MEDIA_QUEUES.av, 'failed')).toBe(0);
        expect(await transcodes()).toBe(1);

        // Work goes on: a registration (its e-mail waits in identity's outbox), a publication (its audit entry waits in evidence's).
        late = await newParticipant(portal.url);
        note = (await late.client.post('/api/evidence', { title: 'Posted while Kafka was away', notes: '' })).data as { id: string };
        expect((await admin.client.put(`/api/evidence/clearance/${note.id}`)).status).toBe(200);

        // A gateway and an evidence service (re)started now listen and serve; they subscribe once Kafka answers.
        await portal.kill('gateway');
        await portal.kill('evidence');
        await Promise.all([portal.start('evidence'), portal.start('gateway')]);
        const evidenceNow = await readiness(portal.serviceUrl('evidence'));
        expect(evidenceNow.status).toBe(200);
        expect(evidenceNow.body.status).toBe('degraded');
        expect(evidenceNow.body.checks['consumer evidence']).toMatch(/^not subscribed yet: waiting for kafka/);
        const gatewayNow = await readiness(portal.url);
        expect(gatewayNow.body.status).toBe('degraded');
        expect(Object.entries(gatewayNow.body.checks).find(([name]) => name.startsWith('consumer gateway.'))?.[1]).toMatch(
          /^not subscribed yet/,
        );
        expect((await owner.client.get(`/api/evidence/item/${id}`)).status).toBe(200);
      }).finally(() => portal.resume('media-worker'));

      // Without a restart, both become ready; the item is ready; the outboxes empty.
      for (const url of [portal.serviceUrl('evidence'), portal.url]) {
        await waitFor(async () => (await readiness(url).catch(() => null))?.body.status === 'ready', {
          timeoutMs: 240_000,
          intervalMs: 1_000,
          what: `${url} to be ready`,
        });
      }
      const item = await waitForMedia(owner.client, id, 240_000);
      expect(item.media_status).toBe('ready');
      await waitFor(
        async () =>
          (await metric(portal, 'media-worker', 'portal_jobs_media_results', { state: 'delayed' })) +
            (await metric(portal, 'media-worker', 'portal_jobs_media_results', { state: 'waiting' })) ===
          0,
        { timeoutMs: 240_000, intervalMs: 1_000, what: "the media worker's outbox to empty" },
      );
      await waitFor(async () => (await readMailApi(servers.env.MAIL_API!)).some((mail) => mail.to.includes(late!.user.email)), {
        timeoutMs: 240_000,
        intervalMs: 1_000,
        what: 'the e-mail of the registration made while Kafka was away',
      });
      await waitFor(async () => ((await admin.client.get(`/api/admin/activity?target=${note!.id}`)).data as AuditEntry[]).length === 1, {
        timeoutMs: 240_000,
        intervalMs: 1_000,
        what: 'the audit entry of the publication made while Kafka was away',
      });
      const recovered = Date.now();
      expect(await transcodes()).toBe(1);
      expect((await readMailApi(servers.env.MAIL_API!)).filter((mail) => mail.to.includes(late!.user.email))).toHaveLength(1);

      const letters = await deadLetters(rig);
      expect(letters).toEqual({ counted: 0, listed: [] });
      printFigures({
        server: 'kafka',
        awaySeconds: Math.round((back - down) / 1000),
        recoverySeconds: Math.round((recovered - back) / 1000),
        retried: {
          'media results put off (outbox)': await jobs('media-results', 'postponed'),
          'media-av jobs failed': await jobs(MEDIA_QUEUES.av, 'failed'),
        },
        ffmpegTranscodes: await transcodes(),
        deadLetters: letters.counted,
      });
    },
    15 * 60_000,
  );

  it(
    "S3 away for 90 s: a photo waiting for the worker and a deleted participant's files go on when it is back, no try spent",
    async () => {
      const { portal, servers, bus } = rig;
      const store = new S3BlobStore({
        bucket: servers.env.S3_BUCKET!,
        endpoint: servers.env.S3_ENDPOINT!,
        region: servers.env.S3_REGION!,
        accessKeyId: servers.env.S3_ACCESS_KEY_ID!,
        secretAccessKey: servers.env.S3_SECRET_ACCESS_KEY!,
        forcePathStyle: true,
        prefix: portal.namespace,
      });
      const doomed = await newParticipant(portal.url);
      const kept = await uploadEvidence(doomed.client, fixtures.jpegWithGps, { title: 'Soon erased' });
      await waitForMedia(doomed.client, kept.data.id as string);
      const original = `evidence/${kept.data.id as string}/r1/original`;
      expect(await store.stat(original)).not.toBeNull();

      // A photo whose job waits (no worker running), and an erasure evidence has not handled yet (a stalled pod).
      await portal.kill('media-worker');
      const owner = await newParticipant(portal.url);
      const photo = await uploadEvidence(owner.client, fixtures.jpegWithGps, { title: 'Taken before S3 went' });
      expect(photo.status).toBe(201);
      let down = 0;
      let back = 0;
      await whilePaused(portal, 'evidence', async () => {
        expect((await admin.client.delete(`/api/user/${doomed.user.id}`)).status).toBe(200);
        await waitFor(async () => (await bus.lag('evidence', [TOPICS.users]))[TOPICS.users]! > 0, {
          what: 'the erasure waiting for evidence',
        });
        ({ down, back } = await outage(rig, 's3', S3_AWAY_MS, async () => {
          portal.resume('evidence');
          await portal.start('media-worker');
          // The erasure starts with the files: evidence holds it until S3 answers.
          await waitForCheck(portal, 'evidence', 'consumer evidence', /^paused on identity\.users: waiting for s3/);
          await waitFor(async () => (await jobs(MEDIA_QUEUES.stills, 'postponed')) > 0, {
            timeoutMs: 60_000,
            what: 'the photo job put off',
          });
          // A new upload cannot be kept now: refused with a 503 (the phone's outbox sends it again later).
          expect((await uploadEvidence(owner.client, fixtures.jpegWithGps, { title: 'Taken while S3 was away' })).status).toBe(503);
        }));
      });

      expect((await waitForMedia(owner.client, photo.data.id as string, 120_000)).media_status).toBe('ready');
      await waitFor(async () => (await store.stat(original)) === null, { timeoutMs: 120_000, what: "the deleted participant's files" });
      await waitFor(async () => (await admin.client.get(`/api/evidence/item/${kept.data.id as string}`)).status === 404, {
        timeoutMs: 60_000,
        what: "the deleted participant's items",
      });
      const recovered = Date.now();
      expect(await jobs(MEDIA_QUEUES.stills, 'failed')).toBe(0);
      const letters = await deadLetters(rig);
      expect(letters).toEqual({ counted: 0, listed: [] });
      printFigures({
        server: 's3',
        awaySeconds: Math.round((back - down) / 1000),
        recoverySeconds: Math.round((recovered - back) / 1000),
        retried: {
          'photo job put off': await jobs(MEDIA_QUEUES.stills, 'postponed'),
          'evidence held tries': await metric(portal, 'evidence', 'portal_consumer_hold_retries_total', { group: 'evidence' }),
        },
        deadLetters: letters.counted,
      });
    },
    10 * 60_000,
  );

  it(
    "the mail server away for 90 s: e-mails wait with no try spent, the call sheet says 'retrying', a message whose appointment starts meanwhile is never sent late",
    async () => {
      const { portal, servers } = rig;
      const soon = await newParticipant(portal.url);
      const later = await newParticipant(portal.url);
      const visitor = new ApiClient(portal.url);
      const set = async (email: string, start: number) => {
        const response = await admin.client.post('/api/appointments', { email, start: new Date(start).toISOString() });
        expect(response.status, response.text).toBe(201);
      };
      const delivery = async (userId: string) => {
        const { appointment } = (await admin.client.get(`/api/appointments/user/${userId}`)).data as {
          appointment: AdminAppointment | null;
        };
        return appointment?.deliveries.find((entry) => entry.key === 'confirmation:email') ?? null;
      };
      const { down, back } = await outage(rig, 'smtp', SMTP_AWAY_MS, async () => {
        expect((await visitor.post('/api/email/send', { email: later.user.email })).status).toBe(200);
        await set(later.user.email, Date.now() + 3600_000);
        await set(soon.user.email, Date.now() + 60_000);
        const retrying = await waitFor(
          async () => ((await delivery(later.user.id))?.state === 'retrying' ? delivery(later.user.id) : null),
          {
            timeoutMs: 120_000,
            what: "the call sheet to say the confirmation e-mail is 'retrying'",
          },
        );
        expect(retrying!.reason).toMatch(/^the mail server is not answering \(.*\); tried again until /);
        // The appointment that starts while the server is away: its confirmation is dropped at the start, with a record.
        const dropped = await waitFor(async () => ((await delivery(soon.user.id))?.state === 'not-sent' ? delivery(soon.user.id) : null), {
          timeoutMs: 150_000,
          what: 'the confirmation of the appointment that started meanwhile to be recorded not sent',
        });
        expect(dropped!.reason).toBe('the appointment started before the mail server could be reached');
      });

      const to = (mails: Awaited<ReturnType<typeof readMailApi>>, email: string, subject: RegExp) =>
        mails.filter((mail) => mail.to.includes(email) && subject.test(mail.subject));
      await waitFor(
        async () => {
          const mails = await readMailApi(servers.env.MAIL_API!);
          return to(mails, later.user.email, /reset code/).length === 1 && to(mails, later.user.email, /your appointment on/).length === 1;
        },
        { timeoutMs: 240_000, intervalMs: 1_000, what: 'the reset code and the confirmation once the server is back' },
      );
      await waitFor(async () => (await delivery(later.user.id))?.state === 'sent', {
        timeoutMs: 60_000,
        what: "the call sheet to say 'sent'",
      });
      const recovered = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const mails = await readMailApi(servers.env.MAIL_API!);
      expect(to(mails, later.user.email, /reset code/)).toHaveLength(1);
      expect(to(mails, later.user.email, /your appointment on/)).toHaveLength(1);
      expect(to(mails, soon.user.email, /appointment/)).toHaveLength(0);
      expect((await delivery(soon.user.id))!.state).toBe('not-sent');
      expect(await metric(portal, 'notifier', 'portal_jobs_mail', { state: 'failed' })).toBe(0);
      const letters = await deadLetters(rig);
      expect(letters).toEqual({ counted: 0, listed: [] });
      printFigures({
        server: 'smtp',
        awaySeconds: Math.round((back - down) / 1000),
        recoverySeconds: Math.round((recovered - back) / 1000),
        retried: {
          'e-mails put off': await metric(portal, 'notifier', 'portal_job_duration_seconds_count', { queue: 'mail', outcome: 'postponed' }),
          'appointment messages put off': await metric(portal, 'notifier', 'portal_appointment_messages_total', { outcome: 'postponed' }),
        },
        deadLetters: letters.counted,
      });
    },
    10 * 60_000,
  );
});
