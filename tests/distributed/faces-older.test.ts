// Items processed before faces were checked (docs/decisions/0044, docs/OPERATIONS.md "Upgrading to
// the release that checks faces"), in the distributed mode: a published group photo whose
// document in MongoDB is put back as the release before left it, then the evidence service
// started again. The check goes through BullMQ on Redis to the separate media worker and its
// report through Kafka; a visitor is never served the photo unblurred meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectMongo } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { GROUP_PHOTO } from '../support/face-fixtures.js';
import { FaceCounter } from '../support/faces.js';
import { startDistributedPortal, type DistributedPortal } from '../support/distributed-portal.js';
import { TEST_ADMIN } from '../support/portal.js';

let portal: DistributedPortal;
let counter: FaceCounter;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'faces-older-'));
  portal = await startDistributedPortal({
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_RATE_LIMITS: 'false',
    ADMIN_USERNAME: TEST_ADMIN.username,
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
  });
  counter = new FaceCounter();
}, 240_000);

afterAll(async () => {
  await counter?.close();
  await portal?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

type WithFaces = EvidenceItem & { faces: { check: string | null; count: number | null; public_copy: string } | null };

it('hides a published photo from before the check until the worker has blurred it, and counts what is left', async () => {
  const { client } = await newParticipant(portal.url);
  const id = (await uploadEvidence(client, GROUP_PHOTO, { title: 'From before the check' })).data.id as string;
  const taken = (await waitForMedia(client, id)) as WithFaces;
  const admin = (await adminClient(portal.url)).client;
  expect((await admin.put(`/api/evidence/clearance/${id}`)).data.is_public).toBe(true);

  // The evidence service stopped, the item's document as the release before left it: no face fields.
  await portal.kill('evidence');
  const connection = await connectMongo(process.env.MONGO_URL!, `${portal.namespace}_evidence`);
  try {
    const reset = await connection.db!.collection('evidence').updateOne(
      { _id: id as never },
      {
        $unset: {
          face_check: '',
          face_count: '',
          faces_key: '',
          public_blur: '',
          public_display_key: '',
          public_thumb_key: '',
          public_poster_key: '',
          public_placeholder: '',
        },
      },
    );
    expect(reset.modifiedCount).toBe(1);
  } finally {
    await connection.close();
  }
  await portal.start('evidence');

  const visitor = () => new ApiClient(portal.url);
  const seen: (string | null)[] = [];
  const shown = await waitFor(
    async () => {
      const listed = ((await visitor().get('/api/evidence/public?limit=100')).data as WithFaces[]).find((item) => item.id === id) ?? null;
      seen.push(listed?.aws_url ?? null);
      expect((await visitor().bytes(taken.aws_url!)).status).toBe(404);
      return listed;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: 'the older photo back in the archive, blurred' },
  );
  expect(seen.filter(Boolean).every((url) => url!.includes('/blurred-display?'))).toBe(true);
  expect(await counter.inPicture((await visitor().bytes(shown.aws_url!)).body)).toBe(0);
  const own = (await client.get(`/api/evidence/item/${id}`)).data as WithFaces;
  expect(own.faces).toMatchObject({ check: 'done', count: 3, public_copy: 'blurred' });
  expect(await counter.inPicture((await client.bytes(own.aws_url!)).body)).toBe(3);

  // What an operator watches: nothing left to check.
  const metrics = await (await fetch(`${portal.serviceUrl('evidence')}/metrics`)).text();
  expect(metrics).toMatch(/^portal_evidence_faces_unchecked\{kind="photo",service="evidence"\} 0$/m);
}, 180_000);
