import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { Connection } from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { S3BlobStore, connectMongo } from '@portal/platform';
import { MongoUserRepository } from '../../services/identity/src/repositories/mongo/mongo-user-repository.js';
import { MongoEvidenceRepository } from '../../services/evidence/src/repositories/mongo/mongo-evidence-repository.js';
import { sampleUser } from '../../services/identity/test/contracts/identity-store-contracts.js';
import { sampleEvidence } from '../../services/evidence/test/contracts/evidence-store-contracts.js';
import { backup, restore, verify, type BackupServers } from '../../infra/backup/portal-backup.mjs';
import { infraServers, stopContainers } from '../support/infra-servers.js';

// infra/backup/portal-backup.mjs against the real MongoDB and S3 servers: a namespace filled
// through the services' own repositories and blob store is backed up, restored into a fresh
// namespace, and everything is found there through the same repositories.
const servers = await infraServers();
const connections: Connection[] = [];
const blobStores: S3BlobStore[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'portal-backup-'));
afterAll(async () => {
  // The servers are shared: leave no database or object behind.
  for (const blobs of blobStores) await blobs.deletePrefix('evidence').catch(() => undefined);
  for (const connection of connections) {
    await connection.dropDatabase().catch(() => undefined);
    await connection.close();
  }
  rmSync(scratch, { recursive: true, force: true });
  await stopContainers();
});

async function stores(backupServers: BackupServers, namespace: string) {
  const identity = await connectMongo(backupServers.mongoUrl, `${namespace}_identity`);
  const evidenceDb = await connectMongo(backupServers.mongoUrl, `${namespace}_evidence`);
  connections.push(identity, evidenceDb);
  const users = new MongoUserRepository(identity);
  const evidence = new MongoEvidenceRepository(evidenceDb);
  const blobs = new S3BlobStore({ ...backupServers.s3, prefix: namespace });
  blobStores.push(blobs);
  return { users, evidence, blobs, identity, evidenceDb };
}

if (servers.mongoUrl && servers.s3) {
  const backupServers: BackupServers = { mongoUrl: servers.mongoUrl, s3: { ...servers.s3, forcePathStyle: true } };

  describe('backup and restore of MongoDB and S3 (infra/backup/portal-backup.mjs)', () => {
    const source = `b${randomBytes(4).toString('hex')}`;
    const target = `r${randomBytes(4).toString('hex')}`;
    const folder = join(scratch, 'backup');
    const users = Array.from({ length: 3 }, (_, i) =>
      sampleUser({ username: `backup_${source}_${i}`, email: `backup_${source}_${i}@example.org` }),
    );
    const items = users.flatMap((user, i) =>
      Array.from({ length: 2 }, (_, j) =>
        sampleEvidence({
          user_id: user.id,
          username: user.username,
          title: `Item ${i}.${j}`,
          is_public: j === 0,
          media_type: 2,
          media_status: 'ready',
          original_key: `evidence/${source}-${i}-${j}/original.jpg`,
        }),
      ),
    );
    const bytes = new Map(items.map((item) => [item.original_key!, randomBytes(2048 + Math.floor(Math.random() * 4096))]));
    // A video's original: streamed both ways in chunks (restore used to read each object whole).
    bytes.set(`evidence/${source}-video/original.mp4`, randomBytes(24 * 1024 * 1024));

    it('backs up a namespace, restores it into a fresh one, and every user, item and object is found there', async () => {
      const from = await stores(backupServers, source);
      await from.users.ensureIndexes();
      await from.evidence.ensureIndexes();
      for (const user of users) await from.users.create(user, []);
      for (const item of items) await from.evidence.create(item, []);
      for (const [key, body] of bytes) await from.blobs.put(key, body, { contentType: 'image/jpeg' });

      const manifest = await backup({ ...backupServers, namespace: source, out: folder, parallel: 3 });
      expect(manifest.databases.identity!.users).toBe(users.length);
      expect(manifest.databases.evidence!.evidence).toBe(items.length);
      expect(manifest.s3.objects).toBe(bytes.size);

      await restore({ ...backupServers, namespace: target, from: folder, parallel: 3 });
      expect(await verify({ ...backupServers, namespace: target, from: folder })).toEqual([]);

      const to = await stores(backupServers, target);
      for (const user of users) {
        expect(await to.users.findById(user.id)).toEqual(user);
        expect((await to.users.findByUsername(user.username))?.id).toBe(user.id);
      }
      for (const item of items) expect(await to.evidence.findById(item.id)).toEqual(item);
      const archive = await to.evidence.list({ publicOnly: true }, 50);
      expect(archive.items.map((item) => item.id).sort()).toEqual(
        items
          .filter((item) => item.is_public)
          .map((item) => item.id)
          .sort(),
      );
      for (const [key, body] of bytes) {
        const object = await to.blobs.get(key);
        expect(object?.info.contentType).toBe('image/jpeg');
        expect(Buffer.compare(await buffer(object!.body), body)).toBe(0);
      }
    });

    it('restores the unique indexes too: a second account with a restored username is refused', async () => {
      const to = await stores(backupServers, target);
      await expect(to.users.create(sampleUser({ username: users[0]!.username }), [])).rejects.toThrow();
    });

    it('refuses to restore over a namespace that holds data, and says so', async () => {
      await expect(restore({ ...backupServers, namespace: target, from: folder })).rejects.toThrow(/already holds/);
    });

    it('verify names what a damaged restore lacks', async () => {
      const to = await stores(backupServers, target);
      await to.blobs.delete(items[0]!.original_key!);
      await to.identity.collection('users').deleteOne({ _id: users[2]!.id } as never);
      await to.evidenceDb.collection('evidence').updateOne({ _id: items[1]!.id } as never, { $set: { title: 'Tampered' } });
      const problems = await verify({ ...backupServers, namespace: target, from: folder });
      expect(problems.sort()).toEqual(
        [
          `evidence.evidence: "${items[1]!.id}" differs`,
          `identity.users: "${users[2]!.id}" is missing`,
          `s3: ${items[0]!.original_key} is missing`,
        ].sort(),
      );
    });
  });
} else {
  describe.skip('Backup and restore — no MongoDB or S3 server (MONGO_URL/S3_* unset and no Docker)', () => it('skipped', () => undefined));
}
