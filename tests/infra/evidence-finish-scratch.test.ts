import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ROLE_USER, mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import {
  IDENTITY_HEADER,
  IdentityTokens,
  createEventBus,
  createJobQueue,
  createLogger,
  infrastructureFromEnv,
  locateFfmpeg,
} from '@portal/platform';
import { createEvidenceService, evidenceSettingsFromEnv, type EvidenceServiceHandle } from '@portal/evidence';
import { freePort } from '../support/free-port.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

// Finished resumable uploads kept in S3 are read back whole into the evidence pod's scratch (an
// emptyDir with a size limit past which the pod is evicted) for inspection. Here more uploads
// finish at the same instant than the scratch holds (UPLOAD_SCRATCH_BYTES, small): the ones that do
// not fit are answered 503 with Retry-After, their bytes kept; each client asks again (HEAD, as a
// tus client does) and its upload becomes an item. None is lost, and the scratch never holds more
// than its budget.

const servers = await infraServers();
afterAll(() => stopContainers());

const MiB = 1024 * 1024;
const SECRET = 'finish-scratch-test-secret-long-enough-1234';
const UPLOADS = 6;

describe.skipIf(!servers.s3)(
  servers.s3 ? 'finishing more uploads at once than the scratch holds' : 'finishing uploads within the scratch (skipped: no S3)',
  () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'finish-scratch-'));
    const scratchDir = join(dataDir, 'tmp', 'finished-uploads');
    const tokens = new IdentityTokens(SECRET);
    let service: EvidenceServiceHandle;
    let closeQueues: () => Promise<void>;
    let url: string;
    let recording: Buffer;

    beforeAll(async () => {
      const s3 = servers.s3!;
      const client = new S3Client({
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      });
      await client.send(new CreateBucketCommand({ Bucket: s3.bucket })).catch(() => undefined);
      client.destroy();
      // A real recording of about 2 MiB (12 s of 16-bit stereo at 44.1 kHz).
      const wav = join(dataDir, 'recording.wav');
      execFileSync(locateFfmpeg().ffmpeg, [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:duration=12',
        '-ac',
        '2',
        '-ar',
        '44100',
        '-y',
        wav,
      ]);
      recording = readFileSync(wav);
      expect(recording.length).toBeGreaterThan(2 * MiB);

      const env = {
        DATA_DIR: dataDir,
        INTERNAL_SECRET: SECRET,
        EVIDENCE_HOST: '127.0.0.1',
        EVIDENCE_PORT: String(await freePort()),
        DEPLOYMENT_NAMESPACE: `scratch-${randomUUID().slice(0, 8)}`,
        S3_ENDPOINT: s3.endpoint,
        S3_BUCKET: s3.bucket,
        S3_REGION: s3.region,
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
        // Room for two of the recordings at once, not three.
        EVIDENCE_IMAGE_MAX_BYTES: String(4 * MiB),
        EVIDENCE_VIDEO_MAX_BYTES: String(4 * MiB),
        EVIDENCE_AUDIO_MAX_BYTES: String(4 * MiB),
        UPLOAD_SCRATCH_BYTES: String(5 * MiB),
      };
      const logger = createLogger({ service: 'evidence', level: 'warn' });
      const infrastructure = infrastructureFromEnv(env);
      const bus = createEventBus(infrastructure, 'evidence', logger);
      const mediaQueues = openMediaQueues((queue) => createJobQueue<MediaJob>(infrastructure, queue, logger));
      closeQueues = async () => {
        for (const queue of mediaQueueList(mediaQueues)) await queue.close();
        await bus.close();
      };
      service = await createEvidenceService(evidenceSettingsFromEnv(env), { bus, mediaQueues, logger, infrastructure });
      url = await service.start();
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await closeQueues?.();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('refuses the finishes that do not fit with 503 and Retry-After, files every upload when asked again, and never overruns', async () => {
      // How much the scratch holds, looked at all along.
      let most = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          let bytes = 0;
          for (const name of readdirSync(scratchDir)) bytes += statSync(join(scratchDir, name), { throwIfNoEntry: false })?.size ?? 0;
          most = Math.max(most, bytes);
          await delay(5);
        }
      })();

      // Six participants, each with an upload whose last byte is still to come.
      const uploads = await Promise.all(
        Array.from({ length: UPLOADS }, async (_, i) => {
          const identity = await tokens.signCaller(
            { userId: randomUUID(), role: ROLE_USER, username: `p${i}`, sessionId: randomUUID(), videoWatched: true },
            600,
          );
          const headers = { [IDENTITY_HEADER]: identity, 'Tus-Resumable': '1.0.0' };
          const created = await fetch(`${url}/api/evidence/uploads`, {
            method: 'POST',
            headers: {
              ...headers,
              'Upload-Length': String(recording.length),
              'Upload-Metadata': `title ${Buffer.from(`Recording ${i}`).toString('base64')}`,
            },
          });
          expect(created.status, await created.clone().text()).toBe(201);
          const location = new URL(created.headers.get('location')!, url).toString();
          const first = await fetch(location, {
            method: 'PATCH',
            headers: { ...headers, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
            body: new Uint8Array(recording.subarray(0, recording.length - 1)),
          });
          expect(first.status).toBe(204);
          return { location, headers };
        }),
      );

      // Every last byte at the same instant.
      const finishes = await Promise.all(
        uploads.map(({ location, headers }) =>
          fetch(location, {
            method: 'PATCH',
            headers: { ...headers, 'Upload-Offset': String(recording.length - 1), 'Content-Type': 'application/offset+octet-stream' },
            body: new Uint8Array(recording.subarray(recording.length - 1)),
          }).then(async (response) => ({
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
            body: await response.text(),
            id: response.headers.get('x-evidence-id'),
          })),
        ),
      );
      const deferred = finishes.filter((finish) => finish.status === 503);
      expect(finishes.filter((finish) => finish.status === 200).length).toBeGreaterThanOrEqual(1);
      expect(deferred.length, 'some finishes had to wait for room').toBeGreaterThanOrEqual(1);
      expect(finishes.every((finish) => finish.status === 200 || finish.status === 503)).toBe(true);
      for (const finish of deferred) {
        expect(Number(finish.retryAfter)).toBeGreaterThan(0);
        expect(JSON.parse(finish.body)).toMatchObject({ code: 'service_unavailable', message: expect.stringMatching(/safely stored/) });
      }

      // The deferred clients ask again after Retry-After, as tus clients do (HEAD), until filed.
      const ids = await Promise.all(
        finishes.map(async (finish, i) => {
          if (finish.status === 200) return finish.id!;
          for (let tries = 0; tries < 20; tries++) {
            await delay(Number(finish.retryAfter) * 1000);
            const head = await fetch(uploads[i]!.location, { method: 'HEAD', headers: uploads[i]!.headers });
            if (head.status === 200 && head.headers.get('x-evidence-id')) return head.headers.get('x-evidence-id')!;
            expect(head.status).toBe(503);
            expect(head.headers.get('retry-after')).toBe(finish.retryAfter);
          }
          throw new Error(`upload ${i} was never filed`);
        }),
      );
      watching = false;
      await watcher;

      expect(new Set(ids).size).toBe(UPLOADS);
      for (const [i, id] of ids.entries()) {
        const item = await fetch(`${url}/api/evidence/item/${id}`, { headers: uploads[i]!.headers });
        expect(item.status).toBe(200);
        expect(await item.json()).toMatchObject({ title: `Recording ${i}`, media_type: 4 });
      }
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(5 * MiB);
      expect(readdirSync(scratchDir)).toEqual([]);
    }, 120_000);
  },
);
