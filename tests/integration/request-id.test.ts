import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { adminClient, newParticipant, publishedEvents, type NewParticipant, type PublishedEvent } from '../support/accounts.js';
import type { ApiClient } from '../support/api-client.js';
import { phoneJpeg } from '../support/media.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';
import { waitForMedia } from '../support/evidence.js';

// A request's id (the gateway's X-Request-Id, on its answer) follows what the request sets going:
// the events and audit entries the services write for it, the media job it queues and the result
// the media worker publishes for that job. The services read it from the request context; the bus
// and the job queue carry it to the handlers. Both ways a resumable upload's chunks travel in the
// all-in-one portal (handed over in the process, or proxied over loopback) are checked.

const TUS = { 'tus-resumable': '1.0.0' };

/** The request ids of the events about one item (keyed by it), by type, in order. */
function requestIdsAbout(events: PublishedEvent[], key: string): [string, string | undefined][] {
  return events
    .filter((event) => event.key === key)
    .map((event) => [event.value.type, (event.value as { trace?: { requestId?: string } }).trace?.requestId]);
}

describe.each([
  { mode: 'chunks handed over in the process', inProcess: 'true' },
  { mode: 'chunks proxied over loopback', inProcess: 'false' },
])('the request id, $mode', ({ inProcess }) => {
  let portal: TestPortal;
  let participant: NewParticipant;
  let admin: ApiClient;

  beforeAll(async () => {
    portal = await startTestPortal({ UPLOADS_IN_PROCESS: inProcess });
    participant = await newParticipant(portal.url);
    admin = (await adminClient(portal.url)).client;
  }, 60_000);
  afterAll(async () => {
    await portal?.dispose();
  });

  it('is on the events of a resumable upload, its media job and the media result, and on an administrator’s audit entry', async () => {
    const photo = await phoneJpeg();
    const created = await participant.client.request('POST', '/api/evidence/uploads', {
      headers: { ...TUS, 'upload-length': String(photo.length), 'upload-metadata': `title ${Buffer.from('Traced').toString('base64')}` },
    });
    expect(created.status, created.text).toBe(201);
    const location = new URL(created.headers.get('location')!, portal.url);
    const finished = await fetch(location, {
      method: 'PATCH',
      headers: {
        ...TUS,
        cookie: [...participant.client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(photo),
    });
    expect(finished.status, await finished.clone().text()).toBe(200);
    const evidenceId = finished.headers.get('x-evidence-id')!;
    const finishingRequest = finished.headers.get('x-request-id')!;
    expect(finishingRequest).toMatch(/^[\w.-]+$/);
    await waitForMedia(participant.client, evidenceId);

    // The item was made by the request that finished the upload, and so were its media job and result.
    const ofUpload = await waitFor(
      () => {
        const ids = requestIdsAbout(publishedEvents(portal.dataDir), evidenceId);
        return ids.some(([type]) => type === 'media.ready') ? ids : null;
      },
      { timeoutMs: 30_000, what: 'the media result on the bus' },
    );
    expect(ofUpload).toContainEqual(['evidence.created', finishingRequest]);
    expect(ofUpload).toContainEqual(['media.ready', finishingRequest]);
    expect(ofUpload.filter(([, id]) => id !== finishingRequest)).toEqual([]);

    // Two acts of an administrator (publish, then unpublish): each audit entry carries its own request's id.
    const publish = await admin.put(`/api/evidence/clearance/${evidenceId}`);
    const unpublish = await admin.put(`/api/evidence/clearance/${evidenceId}`);
    expect(publish.status, publish.text).toBe(200);
    expect(unpublish.status, unpublish.text).toBe(200);
    const audits = await waitFor(
      () => {
        const entries = publishedEvents(portal.dataDir).filter(
          (event) => event.value.type === 'audit.recorded' && (event.value.data.target as { id?: string }).id === evidenceId,
        );
        return entries.length >= 2 ? entries : null;
      },
      { timeoutMs: 10_000, what: 'the audit entries' },
    );
    const byAction = Object.fromEntries(
      audits.map((event) => [event.value.data.action, (event.value as { trace?: { requestId?: string } }).trace?.requestId]),
    );
    expect(byAction).toEqual({
      'evidence.publish': publish.headers.get('x-request-id'),
      'evidence.unpublish': unpublish.headers.get('x-request-id'),
    });
    expect(publish.headers.get('x-request-id')).not.toBe(unpublish.headers.get('x-request-id'));
  }, 90_000);
});
