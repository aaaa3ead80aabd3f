import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { mediaQueueList, openMediaQueues, type MediaJob } from '@portal/contracts';
import { FsBlobStore, SqliteJobQueue, mediaCapsFromEnv, openDatabase } from '@portal/platform';
import { EvidenceService } from '../src/domain/evidence-service.js';
import { EVIDENCE_MIGRATIONS } from '../src/repositories/sqlite/migrations.js';
import { SqliteAuthorDirectory } from '../src/repositories/sqlite/sqlite-author-directory.js';
import { SqliteEvidenceRepository } from '../src/repositories/sqlite/sqlite-evidence-repository.js';
import { sampleEvidence } from './contracts/evidence-store-contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'blob-intents-'));
const db = openDatabase(join(dir, 'evidence.sqlite'), EVIDENCE_MIGRATIONS);
const logger = pino({ level: 'silent' });
const mediaQueues = openMediaQueues((queue) => new SqliteJobQueue<MediaJob>({ file: join(dir, 'jobs.sqlite'), queue, logger }));
afterAll(async () => {
  for (const queue of mediaQueueList(mediaQueues)) await queue.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const repository = new SqliteEvidenceRepository(db);
const blobs = new FsBlobStore(join(dir, 'blobs'));
const service = new EvidenceService({
  evidence: repository,
  authors: new SqliteAuthorDirectory(db),
  blobs,
  mediaQueues,
  limits: { image: 1e6, video: 1e6, audio: 1e6 },
  caps: mediaCapsFromEnv({}),
  logger,
  onEventsCommitted: () => undefined,
});

const put = (key: string) => blobs.put(key, Buffer.from(key), { contentType: 'application/octet-stream' });
const exists = async (key: string) => (await blobs.stat(key)) !== null;

describe('settling blobs a dead process was writing or deleting', () => {
  it('keeps what an item refers to, removes the rest, and leaves fresh notes of live work alone', async () => {
    // An item at revision 2, whose replacement's old revision was not deleted yet; an original
    // written for an item that was never filed; and a blob nobody noted (not this sweep's business).
    const item = sampleEvidence({ media_type: 2, media_status: 'ready', media_revision: 2, original_key: 'x' });
    await repository.create(item, []);
    const [unfiled, unnoted] = [randomUUID(), randomUUID()];
    const keys = {
      oldRevision: `evidence/${item.id}/r1/original`,
      current: `evidence/${item.id}/r2/original`,
      unfiled: `evidence/${unfiled}/r1/original`,
      unnoted: `evidence/${unnoted}/r1/original`,
    };
    for (const key of Object.values(keys)) await put(key);
    for (const prefix of [`evidence/${item.id}/r1/`, `evidence/${item.id}/r2/`, `evidence/${item.id}/`, `evidence/${unfiled}/r1/`]) {
      await repository.blobIntents.add(prefix);
    }

    // Notes made after the given time belong to work that may still be going on.
    expect(await service.sweepBlobIntents(new Date(Date.now() - 60_000))).toBe(0);
    expect(await exists(keys.oldRevision)).toBe(true);

    expect(await service.sweepBlobIntents(new Date(Date.now() + 1000))).toBe(2);
    expect(await exists(keys.oldRevision)).toBe(false);
    expect(await exists(keys.unfiled)).toBe(false);
    expect(await exists(keys.current)).toBe(true);
    expect(await exists(keys.unnoted)).toBe(true);
    expect(await repository.blobIntents.olderThan(new Date(Date.now() + 1000).toISOString(), 100)).toEqual([]);
  });

  it('removes the derivatives of a media result that came for a deleted item or an old revision', async () => {
    const item = sampleEvidence({ media_type: 2, media_status: 'processing', media_revision: 3 });
    await repository.create(item, []);
    const gone = randomUUID();
    const result = (evidenceId: string, revision: number) => ({
      evidenceId,
      revision,
      status: 'ready' as const,
      media_type: 2 as const,
      error: null,
      display: { key: `evidence/${evidenceId}/r${revision}/display.webp`, contentType: 'image/webp' },
      thumbnail: { key: `evidence/${evidenceId}/r${revision}/thumb.webp`, contentType: 'image/webp' },
      poster: null,
      placeholder: null,
      width: 10,
      height: 10,
      duration: null,
    });
    for (const [id, revision] of [
      [gone, 1],
      [item.id, 2],
      [item.id, 3],
    ] as const) {
      await put(`evidence/${id}/r${revision}/display.webp`);
      await service.applyMediaResult(result(id, revision));
    }
    expect(await exists(`evidence/${gone}/r1/display.webp`)).toBe(false);
    expect(await exists(`evidence/${item.id}/r2/display.webp`)).toBe(false);
    expect(await exists(`evidence/${item.id}/r3/display.webp`)).toBe(true);
    expect((await repository.findById(item.id))?.media_status).toBe('ready');
  });

  it("swaps a video's remuxed first copy for its 720p copy: a new URL, the old one still served until the copy is swept an hour later", async () => {
    const item = sampleEvidence({ media_type: 3, media_status: 'processing', media_revision: 1 });
    await repository.create(item, []);
    const prefix = `evidence/${item.id}/r1/`;
    const video = (copy: 'remuxed' | 'transcoded', name: string, width: number) => ({
      evidenceId: item.id,
      revision: 1,
      status: 'ready' as const,
      media_type: 3 as const,
      error: null,
      display: { key: `${prefix}${name}`, contentType: 'video/mp4' },
      thumbnail: { key: `${prefix}thumb.webp`, contentType: 'image/webp' },
      poster: { key: `${prefix}poster.webp`, contentType: 'image/webp' },
      placeholder: 'AAAA',
      width,
      height: 1920,
      duration: 3,
      display_copy: copy,
    });
    for (const name of ['display-remuxed.mp4', 'display.mp4', 'thumb.webp', 'poster.webp']) await put(`${prefix}${name}`);
    const caller = { userId: item.user_id, role: 0, username: 'someone', sessionId: 's' } as const;

    await service.applyMediaResult(video('remuxed', 'display-remuxed.mp4', 1080));
    expect((await service.mediaFor(caller, item.id, 'display', '1-remuxed')).key).toBe(`${prefix}display-remuxed.mp4`);
    await service.applyMediaResult(video('transcoded', 'display.mp4', 720));
    expect((await repository.findById(item.id))?.display_key).toBe(`${prefix}display.mp4`);
    // The old URL's version still leads to the first copy; any other to the current one.
    expect((await service.mediaFor(caller, item.id, 'display', '1-remuxed')).key).toBe(`${prefix}display-remuxed.mp4`);
    expect((await service.mediaFor(caller, item.id, 'display', '1')).key).toBe(`${prefix}display.mp4`);
    expect((await service.mediaFor(caller, item.id, 'display')).key).toBe(`${prefix}display.mp4`);
    // The first copy's result again (its job ran again after a crash) does not undo the swap.
    await service.applyMediaResult(video('remuxed', 'display-remuxed.mp4', 1080));
    expect(await repository.findById(item.id)).toMatchObject({ display_key: `${prefix}display.mp4`, width: 720 });

    // Noted for deletion: not before the note is old enough, then the first copy alone goes.
    expect(await service.sweepBlobIntents(new Date(Date.now() - 60_000))).toBe(0);
    expect(await exists(`${prefix}display-remuxed.mp4`)).toBe(true);
    expect(await service.sweepBlobIntents(new Date(Date.now() + 1000))).toBe(1);
    expect(await exists(`${prefix}display-remuxed.mp4`)).toBe(false);
    for (const name of ['display.mp4', 'thumb.webp', 'poster.webp']) expect(await exists(`${prefix}${name}`), name).toBe(true);
    // Once it is gone, the old URL leads to the current copy.
    expect((await service.mediaFor(caller, item.id, 'display', '1-remuxed')).key).toBe(`${prefix}display.mp4`);
  });
});
