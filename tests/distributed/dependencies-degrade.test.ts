import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { TEST_ADMIN } from '../support/portal.js';
import { startDistributedPortal, type DistributedPortal, type ServiceName } from '../support/distributed-portal.js';
import { startPrivateServers, type PrivateServers } from '../support/private-servers.js';

// One slow dependency must not take the site down: with Kafka, then S3, frozen (SIGSTOP: it
// accepts connections and answers nothing, the worst kind of slow), every service stays ready (its
// /readyz says "degraded" and names what does not answer), and the web app and the public archive
// are still served. The servers are this test's own (infra/local/servers.sh on other ports and
// another data directory): the shared ones are never paused.
let servers: PrivateServers;
let portal: DistributedPortal;
const SERVICES: ServiceName[] = ['identity', 'evidence', 'media-worker', 'notifier'];

beforeAll(async () => {
  servers = await startPrivateServers(['kafka', 'mongo', 'redis', 's3', 'smtp']);
  portal = await startDistributedPortal({
    ...servers.env,
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_RATE_LIMITS: 'false',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
  });
}, 300_000);

afterAll(async () => {
  await portal?.dispose();
  await servers?.stop();
}, 120_000);

async function readiness(url: string): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) });
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
}

describe('a slow dependency degrades the portal, it does not take it down', () => {
  it('serves the app and the public archive, and stays ready, while Kafka and then S3 do not answer', async () => {
    const { client } = await newParticipant(portal.url);
    const note = await client.post('/api/evidence', { title: 'Seen at the corner', notes: 'a public note' });
    expect(note.status).toBe(201);
    const { client: admin } = await adminClient(portal.url);
    expect((await admin.put(`/api/evidence/clearance/${note.data.id}`)).data.is_public).toBe(true);
    const visitor = new ApiClient(portal.url);
    const urls = [portal.url, ...SERVICES.map((service) => portal.serviceUrl(service))];
    // Each consumer joins its group in the background after its process listens ("degraded" until then).
    for (const url of urls.filter((url) => url !== portal.serviceUrl('notifier'))) {
      await waitFor(async () => (await readiness(url)).body.status === 'ready', {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `${url} to be ready`,
      });
    }
    // No text-message provider is set up here: the notifier says so (degraded, the check `sms`
    // names what is missing) instead of writing texts into its scratch folder as if sent.
    const notifierProblems = async () =>
      Object.entries((await readiness(portal.serviceUrl('notifier'))).body.checks).filter(([, state]) => state !== 'ok');
    await waitFor(async () => (await notifierProblems()).length === 1, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the notifier's consumers to join",
    });
    const notifier = await readiness(portal.serviceUrl('notifier'));
    expect(notifier.status).toBe(200);
    expect(notifier.body.status).toBe('degraded');
    expect(await notifierProblems()).toEqual([['sms', 'no text-message provider is set up (TWILIO_ACCOUNT_SID): texts are not sent']]);
    const metrics = await (await fetch(`${portal.serviceUrl('notifier')}/metrics`)).text();
    expect(metrics).toMatch(/^portal_dependency_up\{dependency="sms",service="notifier"\} 0$/m);
    expect(portal.logs('notifier')).toMatch(/appointment texts will not be sent/);

    for (const dependency of ['kafka', 's3'] as const) {
      const pid = servers.pid(dependency);
      process.kill(pid, 'SIGSTOP');
      try {
        // Past the gateway's public cache (2 s), so the archive is read from evidence again.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const app = await fetch(`${portal.url}/`);
        expect(app.status).toBe(200);
        expect(await app.text()).toContain('id="root"');
        const archive = await visitor.get('/api/evidence/public');
        expect(archive.status).toBe(200);
        expect(archive.data.map((item: { title: string }) => item.title)).toContain('Seen at the corner');
        for (const url of urls) {
          const answer = await readiness(url);
          expect(answer.status, `${url}/readyz with ${dependency} frozen: ${JSON.stringify(answer.body)}`).toBe(200);
        }
        // Services that use the frozen server say so.
        const evidence = await readiness(portal.serviceUrl('evidence'));
        expect(evidence.body.status).toBe('degraded');
        expect(evidence.body.checks[dependency === 'kafka' ? 'bus' : 'blobs']).toMatch(/no answer within/);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await waitFor(async () => (await readiness(portal.serviceUrl('evidence'))).body.status === 'ready', {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `evidence to see ${dependency} again`,
      });
    }
  });
});
