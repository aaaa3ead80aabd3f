import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTypeScript } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { makeMediaFixtures, type MediaFixtures } from '../support/media-fixtures.js';
import { TEST_ADMIN, NO_FACE_CHECK, startTestPortal } from '../support/portal.js';

let scratch: string;
let fixtures: MediaFixtures;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'restart-'));
  fixtures = await makeMediaFixtures(join(scratch, 'fixtures'));
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a crash while media jobs are pending', () => {
  it('loses nothing the portal acknowledged: after a start every item ends ready', async () => {
    const dataDir = join(scratch, 'data');
    // The portal as a real process, without its media worker so that the jobs stay pending...
    const first = runTypeScript(fileURLToPath(new URL('../../packages/all-in-one/src/main.ts', import.meta.url)), [], {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      MEDIA_WORKER_ENABLED: 'false',
      LOG_LEVEL: 'info',
      ADMIN_USERNAME: TEST_ADMIN.username,
      ADMIN_EMAIL: TEST_ADMIN.email,
      ADMIN_PASSWORD: TEST_ADMIN.password,
    });
    const ready = await first.waitForLine(/portal ready/, 60_000);
    const url = JSON.parse(ready).url as string;
    const { client } = await newParticipant(url);
    const ids: string[] = [];
    for (const file of [fixtures.phoneMp4, fixtures.jpegWithGps, fixtures.voiceMemoM4a]) {
      const response = await uploadEvidence(client, file, { title: 'Before the crash' });
      expect(response.status).toBe(201);
      ids.push(response.data.id);
    }
    // ...and then killed outright: no shutdown, no flushing.
    await first.kill();

    const second = await startTestPortal(NO_FACE_CHECK, dataDir);
    try {
      // The same participant, with the same session: sessions are on disk too.
      const again = new ApiClient(second.url);
      for (const [name, value] of client.cookies) again.cookies.set(name, value);
      for (const id of ids) {
        const item = await waitForMedia(again, id, 90_000);
        expect(item.media_status, id).toBe('ready');
      }
    } finally {
      await second.dispose();
    }
  });
});
