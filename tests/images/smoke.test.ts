import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { GROUP_PHOTO } from '../support/face-fixtures.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { TEST_ADMIN } from '../support/portal.js';
import { startDistributedPortal, type DistributedPortal } from '../support/distributed-portal.js';
import { imageLauncher } from '../support/image-portal.js';

// The five container images, each service started from its own image (not the work tree), on
// Kafka, MongoDB, Redis, S3 and SMTP: a festival night in miniature through the gateway image.
const tag = process.env.PORTAL_IMAGE_TAG ?? '';

let portal: DistributedPortal;
let fixtures: MediaFixtures;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'image-smoke-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
  portal = await startDistributedPortal(
    {
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_RATE_LIMITS: 'false',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
    },
    imageLauncher(tag),
  );
}, 300_000);

afterAll(async () => {
  await portal?.dispose();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe(`the five images (tag ${tag || 'unset'}) on Kafka, MongoDB, Redis, S3 and SMTP`, () => {
  it('serves the web app from the gateway image', async () => {
    const page = await fetch(`${portal.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toMatch(/<div id="root">|<script type="module"/);
  });

  it('registers, logs in, takes a photo and a video, makes them ready, and the published items appear in the archive', async () => {
    const { client, user } = await newParticipant(portal.url);
    expect((await client.get('/api/user')).data.id).toBe(user.id);

    const photo = await uploadEvidence(client, fixtures.jpegWithGps, { title: 'Image smoke photo' });
    expect(photo.status).toBe(201);
    const video = await uploadEvidence(client, fixtures.phoneMp4, { title: 'Image smoke video' });
    expect(video.status).toBe(201);
    const ready: EvidenceItem[] = [];
    for (const id of [photo.data.id as string, video.data.id as string]) {
      const item = await waitForMedia(client, id, 180_000);
      expect(item.media_status, item.media_error ?? '').toBe('ready');
      ready.push(item);
    }
    expect(ready[1]!.duration).toBeGreaterThan(2);

    const { client: admin } = await adminClient(portal.url);
    for (const item of ready) expect((await admin.put(`/api/evidence/clearance/${item.id}`)).data.is_public).toBe(true);

    const visitor = new ApiClient(portal.url);
    const archive = await waitFor(
      async () => {
        const page = await visitor.get('/api/evidence/public?limit=50');
        const items = page.status === 200 ? (page.data as EvidenceItem[]) : [];
        return ready.every((item) => items.some((shown) => shown.id === item.id)) ? items : null;
      },
      { timeoutMs: 60_000, what: 'both items in the public archive' },
    );
    const shownVideo = archive.find((item) => item.id === ready[1]!.id)!;
    expect(shownVideo.title).toBe('Image smoke video');
    const bytes = await visitor.bytes(shownVideo.aws_url!);
    expect(bytes.headers.get('content-type')).toBe('video/mp4');
    expect(bytes.body.length).toBeGreaterThan(10_000);
    const shownPhoto = archive.find((item) => item.id === ready[0]!.id)!;
    expect((await visitor.bytes(shownPhoto.aws_url!)).headers.get('content-type')).toMatch(/^image\//);
  });

  it("finds the faces of a group photo with the model in the media worker's image and gives the public only the blurred copy", async () => {
    const { client } = await newParticipant(portal.url);
    const id = (await uploadEvidence(client, GROUP_PHOTO, { title: 'Image smoke group' })).data.id as string;
    const item = (await waitForMedia(client, id, 180_000)) as EvidenceItem & { faces: unknown };
    expect(item.faces).toMatchObject({ check: 'done', count: 3, public_copy: 'blurred' });
    const { client: admin } = await adminClient(portal.url);
    await admin.put(`/api/evidence/clearance/${id}`);
    const visitor = new ApiClient(portal.url);
    const shown = await waitFor(
      async () => ((await visitor.get('/api/evidence/public?limit=50')).data as EvidenceItem[]).find((entry) => entry.id === id) ?? null,
      { timeoutMs: 60_000, what: 'the group photo in the public archive' },
    );
    expect(shown.aws_url).toContain('/blurred-display?');
    expect((await visitor.bytes(shown.aws_url!)).status).toBe(200);
    expect((await visitor.bytes(item.aws_url!)).status).toBe(404);
  });
});
