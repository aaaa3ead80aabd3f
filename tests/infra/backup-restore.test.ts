import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { Connection } from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { S3BlobStore, connectMongo } from '@portal/platform';
import { MongoUserRepository } from '../../services/identity/src/repositories/mongo/mongo-user-repository.js';
import { MongoEvidenceRepository } from '../../services/evidence/src/repositories/mongo/mongo-evidence-repository.js';
import { sampleUser } from '../../services/identity/test/contracts/identity-store-contracts.js';
import { sampleEvidence } from '../../services/evidence/test/contracts/evidence-store-contracts.js';
import {
  NO_SPACE_EXIT_CODE,
  NoSpaceError,
  backup,
  estimateBackup,
  freeBytes,
  restore,
  verify,
  type BackupServers,
} from '../../infra/backup/portal-backup.mjs';
import { infraServers, stopContainers } from '../support/infra-servers.js';
import { requirePrerequisite } from '../support/required-suites.js';

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

  describe('backups that cannot fill their own disk, and objects the bucket keeps itself', () => {
    const source = `l${randomBytes(4).toString('hex')}`;
    const elsewhere = `m${randomBytes(4).toString('hex')}`;
    const user = sampleUser({ username: `listed_${source}`, email: `listed_${source}@example.org` });
    const items = Array.from({ length: 4 }, (_, i) =>
      sampleEvidence({
        user_id: user.id,
        username: user.username,
        title: `Listed ${i}`,
        original_key: `evidence/${source}-${i}/original.jpg`,
      }),
    );
    const env = {
      ...process.env,
      MONGO_URL: backupServers.mongoUrl,
      S3_ENDPOINT: backupServers.s3.endpoint,
      S3_BUCKET: backupServers.s3.bucket,
      S3_REGION: backupServers.s3.region,
      S3_ACCESS_KEY_ID: backupServers.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: backupServers.s3.secretAccessKey,
    };
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['infra/backup/portal-backup.mjs', ...args], { env, encoding: 'utf8', timeout: 120_000 });
    const finishedFolder = (root: string, name: string) => {
      mkdirSync(join(root, name), { recursive: true });
      writeFileSync(join(root, name, 'manifest.json'), JSON.stringify({ finishedAt: name }));
    };

    it('applies the retention rule before copying, lists the objects instead of copying them, and restores them from the bucket', async () => {
      const from = await stores(backupServers, source);
      await from.users.ensureIndexes();
      await from.evidence.ensureIndexes();
      await from.users.create(user, []);
      for (const item of items) await from.evidence.create(item, []);
      for (const item of items) await from.blobs.put(item.original_key!, randomBytes(64 * 1024), { contentType: 'image/jpeg' });

      const root = join(scratch, 'nightly');
      for (const name of ['2026-11-21T033000Z', '2026-11-22T033000Z', '2026-11-23T033000Z']) finishedFolder(root, name);
      const manifest = await backup({ ...backupServers, namespace: source, root, keep: 2, objects: 'list', reserve: 1e6 });
      // keep 2: the newest old backup and the new one; older ones went before the copy began.
      expect(readdirSync(root).sort()).toEqual(['2026-11-23T033000Z', basename(manifest.folder)]);
      expect(basename(manifest.folder)).toMatch(/^\d{4}-\d\d-\d\dT\d{6}Z$/);
      expect(manifest.s3).toMatchObject({ copied: false, objects: items.length, bytes: items.length * 64 * 1024 });
      expect(existsSync(join(manifest.folder, 's3'))).toBe(false);
      expect(existsSync(join(manifest.folder, '.in-progress'))).toBe(false);

      // Into another namespace: the objects are copied inside the bucket, content type and all.
      await restore({ ...backupServers, namespace: elsewhere, from: manifest.folder });
      expect(await verify({ ...backupServers, namespace: elsewhere, from: manifest.folder })).toEqual([]);
      const to = await stores(backupServers, elsewhere);
      expect((await to.blobs.get(items[0]!.original_key!))?.info.contentType).toBe('image/jpeg');
      expect(await to.evidence.findById(items[1]!.id)).toEqual(items[1]);

      // In place, after the databases were lost: the objects are found where they are.
      await from.identity.dropDatabase();
      await from.evidenceDb.dropDatabase();
      await restore({ ...backupServers, namespace: source, from: manifest.folder });
      expect(await verify({ ...backupServers, namespace: source, from: manifest.folder })).toEqual([]);

      // An object the bucket no longer holds is named before anything is restored.
      await from.blobs.delete(items[2]!.original_key!);
      const third = `n${randomBytes(4).toString('hex')}`;
      await expect(restore({ ...backupServers, namespace: third, from: manifest.folder })).rejects.toThrow(
        new RegExp(`no longer holds 1 of the objects.*${items[2]!.original_key!}.*earlier versions or its replica`),
      );
      const untouched = await stores(backupServers, third);
      expect(await untouched.users.findById(user.id)).toBeNull();
    });

    it("refuses a backup that would leave less than the reserve free on the volume's real file system, before writing anything (exit code 3)", async () => {
      const root = join(scratch, 'reserve');
      mkdirSync(root);
      const free = await freeBytes(root);
      const refused = cli(
        'backup',
        '--namespace',
        source,
        '--root',
        root,
        '--keep',
        '2',
        '--objects',
        'list',
        '--reserve',
        String(free + 1e12),
      );
      expect(refused.status, refused.stderr).toBe(NO_SPACE_EXIT_CODE);
      // (stderr may start with Node's own warnings)
      expect(refused.stderr).toMatch(
        new RegExp(`^not enough space in ${root}: the backup of ${source} \\(MongoDB [\\d.]+ GB, 3 objects listed\\) needs about`, 'm'),
      );
      expect(readdirSync(root)).toEqual([]);
      const done = cli('backup', '--namespace', source, '--root', root, '--keep', '2', '--objects', 'list', '--reserve', '1Mi');
      expect(done.status, done.stderr).toBe(0);
      expect(done.stdout).toMatch(/backup of .* written to .* \(3 objects listed\)/);
    });

    it('on a small disk of its own (a tmpfs), refuses a copy that does not fit, and one that fills the disk on the way leaves nothing behind', async () => {
      const disk = join(scratch, 'small-disk');
      mkdirSync(disk);
      // 32 MiB: the namespace's objects (4 × 64 KiB) and documents fit; 24 MiB more do not.
      // As root, or through sudo without a password (as infra/local/servers.sh does), owned by this user.
      const asRoot = (command: string, ...args: string[]) =>
        process.getuid?.() === 0
          ? spawnSync(command, args, { encoding: 'utf8' })
          : spawnSync('sudo', ['-n', command, ...args], { encoding: 'utf8' });
      const mounted = asRoot(
        'mount',
        '-t',
        'tmpfs',
        '-o',
        `size=32m,mode=0700,uid=${process.getuid?.()},gid=${process.getgid?.()}`,
        'tmpfs',
        disk,
      );
      if (mounted.status !== 0) {
        requirePrerequisite(`mounting a small tmpfs needs root or sudo (${(mounted.stderr || mounted.error?.message || '').trim()})`);
        return;
      }
      try {
        const from = await stores(backupServers, source);
        const estimate = await estimateBackup({ ...backupServers, namespace: source });
        expect(estimate.objectBytes).toBe(3 * 64 * 1024);
        // Stored while the backup runs (after its check): the disk fills during the copy.
        let stored = false;
        const failed = await backup({
          ...backupServers,
          namespace: source,
          root: disk,
          keep: 2,
          log: async (line) => {
            if (stored || !line.startsWith('space:')) return;
            stored = true;
            await from.blobs.put(`evidence/${source}-late/original.mp4`, randomBytes(40 * 1024 * 1024), { contentType: 'video/mp4' });
          },
        }).catch((error: Error) => error);
        expect(failed).toBeInstanceOf(NoSpaceError);
        expect((failed as Error).message).toMatch(/the disk filled up during the backup/);
        expect(readdirSync(disk).filter((name) => name !== 'lost+found')).toEqual([]);
        // The next night: the 40 MiB video is there, the check refuses before writing a byte.
        const refused = cli('backup', '--namespace', source, '--root', disk, '--keep', '2');
        expect(refused.status, refused.stderr).toBe(NO_SPACE_EXIT_CODE);
        expect(refused.stderr).toMatch(/^not enough space in .*: the backup of .* needs about 0\.04 GB, but 0\.03 GB are free/m);
        expect(readdirSync(disk)).toEqual([]);
        await from.blobs.delete(`evidence/${source}-late/original.mp4`);
      } finally {
        // Busy when the backup left a file open: it must not.
        const unmounted = asRoot('umount', disk);
        expect(unmounted.status, unmounted.stderr).toBe(0);
      }
    });
  });
} else {
  describe.skip('Backup and restore — no MongoDB or S3 server (MONGO_URL/S3_* unset and no Docker)', () => it('skipped', () => undefined));
}
