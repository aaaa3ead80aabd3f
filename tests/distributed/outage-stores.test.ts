import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS, type AuditEntry } from '@portal/contracts';
import { auditEvent, createEvent } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { codeIn, readMailApi } from '../support/outbox.js';
import { registrationForm, phoneJpeg } from '../support/media.js';
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

// Nothing lost while a store is away (issue 29): MongoDB stopped for 5 minutes while the identity
// consumers have audit and erasure events in hand, Redis stopped for 2 minutes while the notifier
// has mail events in hand. Afterwards every event is handled once, and no dead letter exists.
// Before, a handler failing five times (a few seconds) sent its message to the dead letters: 4 of 6
// audit entries were lost that way to a 4-minute MongoDB outage. The outage suites run beside the
// other suites in CI (vitest.outages.config.ts), on servers of their own.

const MONGO_AWAY_MS = 5 * 60_000;
const REDIS_AWAY_MS = 2 * 60_000;

let rig: OutageRig;
let admin: Awaited<ReturnType<typeof adminClient>>;
beforeAll(async () => {
  rig = await startOutageRig();
  admin = await adminClient(rig.portal.url);
}, 300_000);
afterAll(async () => {
  await rig?.close();
}, 120_000);

async function activity(query: string): Promise<AuditEntry[]> {
  const response = await admin.client.get(`/api/admin/activity${query}`);
  if (response.status !== 200) throw new Error(`activity answered ${response.status}`);
  return response.data as AuditEntry[];
}

describe('a store away for longer than any retry budget: the consumers hold their events, nothing is lost', () => {
  it(
    'MongoDB away for 5 minutes while identity has audit entries and an erasure in hand: each handled once, no dead letter',
    async () => {
      const { portal, bus } = rig;
      // Real work first: a participant's note, published by an administrator (an audit entry about it).
      const doomed = await newParticipant(portal.url);
      const note = (await doomed.client.post('/api/evidence', { title: 'Seen before the outage', notes: 'a note' })).data as { id: string };
      expect((await admin.client.put(`/api/evidence/clearance/${note.id}`)).status).toBe(200);
      await waitFor(async () => (await activity(`?target=${note.id}`)).length === 1, { what: 'the audit entry of the publication' });

      const form = {
        username: `outage_${Date.now().toString(36)}`,
        email: `outage_${Date.now().toString(36)}@example.org`,
        password: 'password1',
      };
      const audits = Array.from({ length: 6 }, (_, n) =>
        auditEvent({
          actor: { userId: admin.user.id, username: 'overseer' },
          action: 'evidence.publish',
          target: { type: 'evidence', id: `outage-${note.id}-${n}`, label: `Published during the outage ${n}` },
        }),
      );
      let heldTries = 0;
      const { down, back } = await outage(rig, 'mongo', MONGO_AWAY_MS, async () => {
        // The events identity and evidence publish from their outboxes, which live in MongoDB: while
        // it is away nothing new can come from there, so these are written as they would have been
        // just before it went (the same builders, the same bus adapter): six publications and an erasure.
        await bus.publish(
          TOPICS.audit,
          audits.map(({ event }) => ({ key: event.key, value: event })),
        );
        const erasure = createEvent({ type: 'user.deleted', key: doomed.user.id, data: { userId: doomed.user.id } });
        await bus.publish(TOPICS.users, [{ key: erasure.key, value: erasure }]);

        // Both identity consumers' events are in hand: the group holds them, and says what it waits for.
        const held = await waitForCheck(portal, 'identity', 'consumer identity.audit', /^paused on .*: waiting for mongodb since /);
        expect(held.status).toBe(200);
        expect(held.body.status).toBe('degraded');
        expect(await metric(portal, 'identity', 'portal_consumer_paused', { group: 'identity.audit' })).toBe(1);
        await waitForCheck(portal, 'evidence', 'consumer evidence', /^paused on identity\.users: waiting for mongodb/);

        // Work keeps coming: a registration is refused for now with a 503 the app can show, and nothing half-made stays.
        const refused = await new ApiClient(portal.url).postForm(
          '/api/user/register',
          registrationForm(form, { bytes: await phoneJpeg() }),
        );
        expect(refused.status, refused.text).toBe(503);
        expect(refused.data).toMatchObject({ code: 'service_unavailable' });

        // identity started again now (a pod rescheduled): it listens and is live, says what it waits
        // for, and is not ready until MongoDB answers; no crash-loop.
        heldTries = await metric(portal, 'identity', 'portal_consumer_hold_retries_total', { group: 'identity.audit' });
        await portal.kill('identity');
        await portal.start('identity', { until: 'live' });
        expect((await readiness(portal.serviceUrl('identity'))).status).toBe(503);
        const starting = await waitForCheck(portal, 'identity', 'start', /^waiting for mongodb: /);
        expect(starting).toMatchObject({ status: 503, body: { status: 'starting' } });
      });

      // identity becomes ready by itself, and every held event is handled, once: the six entries, and
      // the erasure (of the entry's identifiers and of the items).
      await waitFor(async () => (await readiness(portal.serviceUrl('identity')).catch(() => null))?.status === 200, {
        timeoutMs: 120_000,
        intervalMs: 1_000,
        what: 'identity, started while MongoDB was away, to be ready',
      });
      await waitFor(
        async () => {
          const published = await activity('?action=evidence.publish');
          return audits.every(({ event }) => published.some((entry) => entry.id === event.id));
        },
        { timeoutMs: 240_000, intervalMs: 1_000, what: 'the six audit entries held during the outage' },
      );
      await waitFor(async () => (await activity(`?target=${note.id}`))[0]?.erased === true, {
        timeoutMs: 120_000,
        what: "the deleted participant's identifiers erased from the audit log",
      });
      await waitFor(async () => (await admin.client.get(`/api/evidence/item/${note.id}`)).status === 404, {
        timeoutMs: 120_000,
        what: "the deleted participant's evidence erased",
      });
      const recovered = Date.now();
      const published = await activity('?action=evidence.publish');
      for (const { event } of audits) expect(published.filter((entry) => entry.id === event.id)).toHaveLength(1);

      // The registration refused meanwhile goes through now, under the same name: nothing of it was left.
      const again = await new ApiClient(portal.url).postForm('/api/user/register', registrationForm(form, { bytes: await phoneJpeg() }));
      expect(again.status, again.text).toBe(201);

      await waitFor(async () => (await metric(portal, 'identity', 'portal_consumer_paused')) === 0, { what: 'no consumer paused' });
      const letters = await deadLetters(rig);
      expect(letters).toEqual({ counted: 0, listed: [] });
      printFigures({
        server: 'mongo',
        awaySeconds: Math.round((back - down) / 1000),
        recoverySeconds: Math.round((recovered - back) / 1000),
        retried: {
          // Of the identity process that held them (before it was started again), and of the evidence process.
          'identity.audit held tries': heldTries,
          'evidence held tries': await metric(portal, 'evidence', 'portal_consumer_hold_retries_total', { group: 'evidence' }),
        },
        heldEvents: audits.length + 1,
        deadLetters: letters.counted,
      });
    },
    15 * 60_000,
  );

  it(
    'Redis away for 2 minutes while the notifier has mail events in hand: every e-mail sent once, the codes kept, no dead letter',
    async () => {
      const { portal, servers, bus } = rig;
      const people = await Promise.all(Array.from({ length: 3 }, () => newParticipant(portal.url)));
      const visitor = new ApiClient(portal.url);
      // The notifier falls behind (a stalled pod) while identity sends three reset codes' events, and
      // Redis, where their e-mails would be queued, goes away before it catches up.
      let down = 0;
      let back = 0;
      let heldTries = 0;
      await whilePaused(portal, 'notifier', async () => {
        for (const { user } of people) expect((await visitor.post('/api/email/send', { email: user.email })).status).toBe(200);
        await waitFor(async () => (await bus.lag('notifier', [TOPICS.passwordResets]))[TOPICS.passwordResets] === 3, {
          timeoutMs: 60_000,
          what: "the three events waiting for the notifier's group",
        });
        ({ down, back } = await outage(rig, 'redis', REDIS_AWAY_MS, async () => {
          portal.resume('notifier');
          const held = await waitForCheck(
            portal,
            'notifier',
            'consumer notifier',
            /^paused on identity\.(password-resets|users): waiting for redis since /,
          );
          expect(held.body.status).toBe('degraded');
          expect(await metric(portal, 'notifier', 'portal_consumer_paused', { group: 'notifier' })).toBe(1);
          // Signing in needs the sessions in Redis: refused for now, with a 503.
          expect(
            (await visitor.post('/api/user/login', { username: people[0]!.user.username, password: people[0]!.password })).status,
          ).toBe(503);
          // The media worker and the notifier started again now: live, not ready while their job queues wait for Redis.
          heldTries = await metric(portal, 'notifier', 'portal_consumer_hold_retries_total', { group: 'notifier' });
          for (const service of ['media-worker', 'notifier'] as const) {
            await portal.kill(service);
            await portal.start(service, { until: 'live' });
            expect(await readiness(portal.serviceUrl(service)), service).toMatchObject({
              status: 503,
              body: { status: 'starting', checks: { start: 'connecting the job queues' } },
            });
          }
        }));
      });

      const resets = (mails: Awaited<ReturnType<typeof readMailApi>>, email: string) =>
        mails.filter((mail) => mail.to.includes(email) && /reset code/.test(mail.subject));
      await waitFor(
        async () => {
          const mails = await readMailApi(servers.env.MAIL_API!);
          return people.every(({ user }) => resets(mails, user.email).length === 1);
        },
        { timeoutMs: 180_000, intervalMs: 1_000, what: 'the three reset codes' },
      );
      const recovered = Date.now();
      for (const service of ['media-worker', 'notifier'] as const) {
        await waitFor(async () => (await readiness(portal.serviceUrl(service)).catch(() => null))?.status === 200, {
          timeoutMs: 60_000,
          what: `${service}, started while Redis was away, to be ready`,
        });
      }
      // Given a moment for a second copy to show up, if one were sent: there is none.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const mails = await readMailApi(servers.env.MAIL_API!);
      for (const { user } of people) expect(resets(mails, user.email), user.email).toHaveLength(1);
      // Redis kept the codes through its restart (append-only file): each one sets its owner's password.
      const [first] = people;
      const code = codeIn(resets(mails, first!.user.email)[0]!);
      expect(
        (await visitor.put('/api/user/passwordupdated', { email: first!.user.email, code, password: 'after-the-outage' })).status,
      ).toBe(200);

      const letters = await deadLetters(rig);
      expect(letters).toEqual({ counted: 0, listed: [] });
      printFigures({
        server: 'redis',
        awaySeconds: Math.round((back - down) / 1000),
        recoverySeconds: Math.round((recovered - back) / 1000),
        // Of the notifier that held them, before it was started again.
        retried: { 'notifier held tries': heldTries },
        heldEvents: people.length,
        deadLetters: letters.counted,
      });
    },
    10 * 60_000,
  );
});
