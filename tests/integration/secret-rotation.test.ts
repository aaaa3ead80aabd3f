import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import { buildOpenApiDocument } from '@portal/contracts/openapi';
import { FsBlobStore, SqliteEventBus, SqliteJobQueue, createLogger, infrastructureFromEnv } from '@portal/platform';
import { createEvidenceService, evidenceSettingsFromEnv } from '@portal/evidence';
import { createGateway, gatewaySettingsFromEnv } from '@portal/gateway';
import { createIdentityService, identitySettingsFromEnv } from '@portal/identity';
import { createNotifier, notifierSettingsFromEnv } from '@portal/notifier';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { codeIn, waitForMail } from '../support/outbox.js';

// Rotating INTERNAL_SECRET without an outage, with running services talking over real HTTP (and
// the event log): every pod accepts INTERNAL_SECRET_PREVIOUS when checking, never signs with it.
// The rotation is three rollouts (docs/OPERATIONS.md, "Rotating the shared secret"):
//   1. every pod learns the new secret, still signing with the old one (INTERNAL_SECRET=old,
//      INTERNAL_SECRET_PREVIOUS=new);
//   2. every pod signs with the new one and still accepts the old one (INTERNAL_SECRET=new,
//      INTERNAL_SECRET_PREVIOUS=old);
//   3. after the window, INTERNAL_SECRET_PREVIOUS is removed.
// During 1 and 2 old and new pods run side by side and accept each other's tokens, links and
// sealed events; after 3 what the old secret signed is refused.

const OLD = 'rotation-test-old-secret-0123456789abcdefgh';
const NEW = 'rotation-test-new-secret-9876543210zyxwvuts';
const ADMIN = { username: 'rotationadmin', email: 'rotationadmin@example.org', password: 'rotation-admin-pass-1' };
type Secrets = { INTERNAL_SECRET: string; INTERNAL_SECRET_PREVIOUS?: string };
const before: Secrets = { INTERNAL_SECRET: OLD };
const step1: Secrets = { INTERNAL_SECRET: OLD, INTERNAL_SECRET_PREVIOUS: NEW };
const step2: Secrets = { INTERNAL_SECRET: NEW, INTERNAL_SECRET_PREVIOUS: OLD };
const after: Secrets = { INTERNAL_SECRET: NEW };

const silent = createLogger({ service: 'rotation', level: 'silent' });
const dirs: string[] = [];
const stops: (() => Promise<void>)[] = [];
const scratch = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `rotation-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** An identity pod over the identity data in `dataDir` (pods of one deployment share it), with its event log. */
async function identityPod(dataDir: string, secrets: Secrets) {
  const bus = new SqliteEventBus({ file: join(dataDir, 'bus.sqlite'), logger: silent });
  const service = await createIdentityService(
    identitySettingsFromEnv({
      DATA_DIR: dataDir,
      IDENTITY_HOST: '127.0.0.1',
      IDENTITY_PORT: '0',
      AUTH_RATE_LIMITS: 'false',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...secrets,
    }),
    {
      bus,
      blobs: new FsBlobStore(join(dataDir, 'blobs')),
      infrastructure: { ...infrastructureFromEnv({ DATA_DIR: dataDir }), kafkaBrokers: null, redisUrl: null, mongoUrl: null, s3: null },
      logger: silent,
    },
  );
  const url = await service.start();
  const stop = async () => {
    await service.stop();
    await bus.close();
  };
  stops.push(stop);
  return { url, stop };
}

/** An evidence pod (its own data: what is checked here is who may call it). */
async function evidencePod(secrets: Secrets) {
  const dataDir = scratch('evidence');
  const env = { DATA_DIR: dataDir, EVIDENCE_HOST: '127.0.0.1', EVIDENCE_PORT: '0', ...secrets };
  const infrastructure = infrastructureFromEnv(env);
  const bus = new SqliteEventBus({ file: join(dataDir, 'bus.sqlite'), logger: silent });
  const mediaQueues = openMediaQueues(
    (queue) => new SqliteJobQueue<MediaJob>({ file: join(dataDir, 'jobs.sqlite'), queue, logger: silent }),
  );
  const service = await createEvidenceService(evidenceSettingsFromEnv(env), { bus, mediaQueues, logger: silent, infrastructure });
  const url = await service.start();
  stops.push(async () => {
    await service.stop();
    for (const queue of mediaQueueList(mediaQueues)) await queue.close();
    await bus.close();
  });
  return url;
}

/** A gateway pod in front of the given identity and evidence pods. */
async function gatewayPod(secrets: Secrets, identityUrl: string, evidenceUrl: string) {
  const gateway = await createGateway(
    gatewaySettingsFromEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      IDENTITY_URL: identityUrl,
      EVIDENCE_URL: evidenceUrl,
      WEB_DIST: scratch('web'),
      RATE_LIMIT_PER_MINUTE: '0',
      ...secrets,
    }),
    { logger: silent, openapi: buildOpenApiDocument() },
  );
  const url = await gateway.start();
  stops.push(() => gateway.stop());
  return url;
}

describe('rotating the shared secret', () => {
  describe('caller and service tokens, gateway to identity and evidence', () => {
    // One identity deployment already at step 2 (it resolves sessions for every gateway below);
    // the evidence pods are those of each step.
    let identityUrl: string;
    let cookie: string;
    const evidence: Record<'before' | 'step1' | 'step2' | 'after', string> = { before: '', step1: '', step2: '', after: '' };
    beforeAll(async () => {
      identityUrl = (await identityPod(scratch('identity'), step2)).url;
      for (const [name, secrets] of Object.entries({ before, step1, step2, after }))
        evidence[name as keyof typeof evidence] = await evidencePod(secrets);
      const api = new ApiClient(await gatewayPod(before, identityUrl, evidence.before));
      expect((await api.post('/api/user/login', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
      cookie = `portal_session=${api.cookies.get('portal_session')}`;
    }, 60_000);

    /** A signed-in read proxied by a gateway with `gatewaySecrets` to the evidence pod named. */
    async function ownItems(gatewaySecrets: Secrets, pod: keyof typeof evidence): Promise<number> {
      const url = await gatewayPod(gatewaySecrets, identityUrl, evidence[pod]);
      return (await fetch(`${url}/api/evidence`, { headers: { cookie } })).status;
    }

    it('before the rotation, an old gateway and an old evidence pod agree', async () => {
      expect(await ownItems(before, 'before')).toBe(200);
    });

    it('step 1: an old gateway reaches a pod that already knows the new secret', async () => {
      expect(await ownItems(before, 'step1')).toBe(200);
      expect(await ownItems(step1, 'before')).toBe(200);
    });

    it('step 2: a gateway signing with the new secret reaches a pod of step 1, and a gateway of step 1 a pod of step 2', async () => {
      expect(await ownItems(step2, 'step1')).toBe(200);
      expect(await ownItems(step1, 'step2')).toBe(200);
      expect(await ownItems(before, 'step2')).toBe(200);
    });

    it('after the window: a pod without INTERNAL_SECRET_PREVIOUS refuses what the old secret signed, and takes the new', async () => {
      expect(await ownItems(before, 'after')).toBe(401);
      expect(await ownItems(step1, 'after')).toBe(401);
      expect(await ownItems(step2, 'after')).toBe(200);
      expect(await ownItems(after, 'after')).toBe(200);
    });

    it('skipping step 1 is the outage the steps avoid: a pod with the old secret alone refuses the new', async () => {
      expect(await ownItems(step2, 'before')).toBe(401);
    });
  });

  describe('sealed events, e-mail links and reset codes, identity to notifier and identity to identity', () => {
    it('what an old identity pod sealed and signed is opened and accepted by new pods during the window, and refused after it', async () => {
      const identityData = scratch('identity-shared');
      const notifierData = scratch('notifier');
      // An identity pod of step 1 (signs with the old secret) and a notifier pod of step 2, side by side.
      const oldIdentity = await identityPod(identityData, step1);
      const notifierBus = new SqliteEventBus({ file: join(identityData, 'bus.sqlite'), logger: silent });
      const mail = new SqliteJobQueue<never>({ file: join(notifierData, 'jobs.sqlite'), queue: 'mail', logger: silent });
      let notifier = createNotifier(
        notifierSettingsFromEnv({ DATA_DIR: notifierData, PUBLIC_URL: 'https://portal.example.org', ...step2 }),
        { bus: notifierBus, mail, logger: silent },
      );
      await notifier.start();
      stops.push(async () => {
        await notifier.stop();
        await mail.close();
        await notifierBus.close();
      });
      const gateway = await gatewayPod(step1, oldIdentity.url, await evidencePod(step1));

      // Registration: the old identity pod seals a verification link (signed with the old secret)
      // into its event; the new notifier opens it and sends the e-mail.
      const { user } = await newParticipant(gateway);
      const verification = await waitForMail(notifierData, user.email, { subject: /confirm|verify/i, timeoutMs: 20_000 });
      const link = /https:\/\/portal\.example\.org(\/api\/user\/verify-email\?token=[^\s"<>]+)/.exec(verification.text)?.[1];
      expect(link, verification.text).toBeTruthy();
      // Reset codes (for two participants): sealed by the old pod, their hashes keyed with the old secret's key.
      const other = (await newParticipant(gateway)).user;
      const sendCode = async (url: string, email: string, count = 1) => {
        expect(
          (
            await fetch(`${url}/api/email/send`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ email }),
            })
          ).status,
        ).toBe(200);
        return codeIn(await waitForMail(notifierData, email, { count, subject: /reset code/, timeoutMs: 20_000 }));
      };
      const checkCode = async (url: string, email: string, code: string) =>
        (await (
          await fetch(`${url}/api/email/check/reset-code`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, code }),
          })
        ).json()) as { codeMatches: boolean };
      const code = await sendCode(oldIdentity.url, user.email);
      const otherCode = await sendCode(oldIdentity.url, other.email);

      // The identity deployment rolls to step 2: the new pod accepts the old pod's link and code.
      await oldIdentity.stop();
      const newIdentity = await identityPod(identityData, step2);
      const follow = async (url: string) => (await fetch(`${url}${link}`, { redirect: 'manual' })).headers.get('location');
      expect(await checkCode(newIdentity.url, user.email, code)).toEqual({ codeMatches: true });
      expect(await follow(newIdentity.url)).toBe('/verify-email?status=verified');

      // And the other way: what the new identity pod seals is opened by a notifier pod of step 1.
      await notifier.stop();
      notifier = createNotifier(notifierSettingsFromEnv({ DATA_DIR: notifierData, PUBLIC_URL: 'https://portal.example.org', ...step1 }), {
        bus: notifierBus,
        mail,
        logger: silent,
      });
      await notifier.start();
      const newCode = await sendCode(newIdentity.url, user.email, 2);
      expect(await checkCode(newIdentity.url, user.email, newCode)).toEqual({ codeMatches: true });

      // After the window: a pod without the previous secret refuses them.
      await newIdentity.stop();
      const afterIdentity = await identityPod(identityData, after);
      expect(await checkCode(afterIdentity.url, other.email, otherCode)).toEqual({ codeMatches: false });
      expect(await checkCode(afterIdentity.url, user.email, newCode)).toEqual({ codeMatches: true });
      expect(await follow(afterIdentity.url)).toBe('/verify-email?status=invalid');
    }, 90_000);
  });

  // Twilio keeps two auth tokens at once: a secondary is made beside the primary, the notifier is
  // rolled onto it, then it is promoted (the old one stops working). The pods check the token at
  // every readiness probe (a real request to Twilio): a pod left on the old token says so.
  describe('TWILIO_AUTH_TOKEN: a secondary token, the notifier rolled onto it, then promoted', () => {
    const SID = 'AC00000000000000000000000000000003';
    const OLD_TOKEN = 'twilio-old-token-0123456789abcdef';
    const NEW_TOKEN = 'twilio-new-token-fedcba9876543210';
    // A STAND-IN for Twilio's REST API (no provider is reachable here): the account's record and
    // its Messages endpoint, with HTTP basic auth against the tokens the account has now.
    const accepted = new Set([OLD_TOKEN]);
    const sent: string[] = [];
    let twilioUrl = '';
    beforeAll(async () => {
      const server = createServer((req, res) => {
        req.resume().on('end', () => {
          const [sid, token] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
            .toString()
            .split(':');
          const answer = (status: number, body: object) =>
            res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
          if (sid !== SID || !accepted.has(token!)) return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
          if (req.method === 'GET' && req.url === `/2010-04-01/Accounts/${SID}.json`) return answer(200, { sid: SID, status: 'active' });
          if (req.method === 'POST' && req.url === `/2010-04-01/Accounts/${SID}/Messages.json`) {
            sent.push(token!);
            return answer(201, { sid: `SM${String(sent.length).padStart(32, '0')}`, status: 'queued' });
          }
          answer(404, { code: 20404, message: 'Not found', status: 404 });
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      twilioUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    });

    /** A notifier pod as main.ts makes it on distributed servers, with the Secret portal-sms's token. */
    const notifierPod = (token: string) => {
      const dataDir = scratch('notifier-sms');
      const bus = new SqliteEventBus({ file: join(dataDir, 'bus.sqlite'), logger: silent });
      const mail = new SqliteJobQueue<never>({ file: join(dataDir, 'jobs.sqlite'), queue: 'mail', logger: silent });
      stops.push(async () => {
        await mail.close();
        await bus.close();
      });
      const settings = notifierSettingsFromEnv({
        DATA_DIR: dataDir,
        ...after,
        TWILIO_ACCOUNT_SID: SID,
        TWILIO_AUTH_TOKEN: token,
        TWILIO_FROM: '+12025550100',
        TWILIO_API_BASE_URL: twilioUrl,
      });
      return createNotifier(settings, { bus, mail, logger: silent, distributed: true }).sms;
    };
    const text = (sms: ReturnType<typeof notifierPod>, n: number) =>
      sms.send({ to: '+12025550123', body: `Reminder ${n}`, messageId: `rotation-${n}` });

    it('old and new pods both send while both tokens are valid; after the promotion the old pod is not ready to text, the new one sends', async () => {
      const oldPod = notifierPod(OLD_TOKEN);
      await oldPod.ping();
      await text(oldPod, 1);
      // 1. A secondary token in Twilio's console; the Secret gets it, the notifier rolls.
      accepted.add(NEW_TOKEN);
      const newPod = notifierPod(NEW_TOKEN);
      await newPod.ping();
      await text(newPod, 2);
      await text(oldPod, 3); // the old pod, still running during the rollout
      expect(sent).toEqual([OLD_TOKEN, NEW_TOKEN, OLD_TOKEN]);
      // 2. Promoted: the old token stops working. A pod still on it fails its readiness check sms
      // (degraded, PortalTextMessagesUnavailable) and its texts (retried, not lost); the new one sends.
      accepted.delete(OLD_TOKEN);
      await expect(oldPod.ping()).rejects.toThrow();
      await expect(text(oldPod, 4)).rejects.toThrow();
      await newPod.ping();
      await text(newPod, 5);
      expect(sent).toEqual([OLD_TOKEN, NEW_TOKEN, OLD_TOKEN, NEW_TOKEN]);
    });
  });
});
