import { mkdir, mkdtemp, readdir, rm, statfs, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  NoSpaceError,
  STALE_MS,
  backupName,
  checkFreeSpace,
  eachBounded,
  freeBytes,
  parseSize,
  prune,
} from '../../infra/backup/portal-backup.mjs';

// The parts of infra/backup/portal-backup.mjs that need no server: the retention rule the
// CronJob (k8s/components/backup-cronjob) applies after each backup, and the bounded
// parallelism of object copies. Backup and restore themselves: tests/infra/backup-restore.test.ts.
const root = await mkdtemp(join(tmpdir(), 'backup-retention-'));
afterAll(() => rm(root, { recursive: true, force: true }));

async function folder(name: string, finished: boolean): Promise<void> {
  await mkdir(join(root, name, 's3'), { recursive: true });
  await writeFile(
    join(root, name, 'manifest.json'),
    JSON.stringify({ format: 1, namespace: 'portal', startedAt: name, ...(finished ? { finishedAt: name } : {}) }),
  );
}

describe('backup retention (prune)', () => {
  it('keeps the newest finished backups, removes older ones and failed runs before the newest finished one', async () => {
    for (const day of [20, 21, 22, 23, 24]) await folder(`2026-11-${day}T033000Z`, true);
    await folder('2026-11-22T120000Z', false); // a run that failed half-way
    await folder('2026-11-25T033000Z', false); // the run going on now
    await writeFile(join(root, 'notes.txt'), 'not a backup');
    const removed = await prune({ root, keep: 3 });
    expect(removed.sort()).toEqual(['2026-11-20T033000Z', '2026-11-21T033000Z', '2026-11-22T120000Z']);
    expect((await readdir(root)).sort()).toEqual([
      '2026-11-22T033000Z',
      '2026-11-23T033000Z',
      '2026-11-24T033000Z',
      '2026-11-25T033000Z',
      'notes.txt',
    ]);
    expect(await prune({ root, keep: 3 })).toEqual([]);
  });

  it('refuses a keep of less than one', async () => {
    await expect(prune({ root, keep: 0 })).rejects.toThrow(/at least 1/);
  });

  // `backup && prune` never freed space after a failure: two failed runs in a row (a full disk)
  // kept their folders, newer than the newest finished backup, and the third failed as well.
  it('removes failed runs newer than the newest finished backup once nothing touched them for a while, and keeps a running one', async () => {
    const own = await mkdtemp(join(root, 'stale-'));
    const make = async (name: string, finished: boolean, idleMs: number) => {
      await mkdir(join(own, name), { recursive: true });
      if (finished) await writeFile(join(own, name, 'manifest.json'), JSON.stringify({ finishedAt: name }));
      else await writeFile(join(own, name, '.in-progress'), '');
      const at = new Date(Date.now() - idleMs);
      await utimes(join(own, name, finished ? 'manifest.json' : '.in-progress'), at, at);
      await utimes(join(own, name), at, at);
    };
    await make('2026-11-24T033000Z', true, 3 * 86_400_000);
    await make('2026-11-25T033000Z', false, 2 * 86_400_000); // killed (out of memory, its deadline)
    await make('2026-11-26T033000Z', false, STALE_MS + 60_000); // killed a quarter of an hour ago
    await make('2026-11-26T120000Z', false, 20_000); // running: it touched its file 20 s ago
    expect((await prune({ root: own, keep: 3 })).sort()).toEqual(['2026-11-25T033000Z', '2026-11-26T033000Z']);
    expect((await readdir(own)).sort()).toEqual(['2026-11-24T033000Z', '2026-11-26T120000Z']);
  });

  it('names a backup by its UTC start time, so names sort by time', () => {
    expect(backupName(new Date('2026-11-24T03:30:07.123Z'))).toBe('2026-11-24T033007Z');
    expect(backupName(new Date('2026-11-24T23:00:00Z')) > backupName(new Date('2026-11-24T03:30:00Z'))).toBe(true);
  });
});

// A full disk cannot be staged here without root (tests/infra/backup-restore.test.ts does, with a
// small tmpfs, where root is allowed): the check reads the real free space of this file system
// (statfs), and a reserve or a size beyond it must be refused, with the figures.
describe('free space, checked before a backup writes anything (checkFreeSpace)', () => {
  it('reads what the file system itself says is free', async () => {
    const fs = await statfs(root);
    expect(await freeBytes(root)).toBe(fs.bavail * fs.bsize);
  });

  it('refuses a backup larger than the free space, or one that would leave less than the reserve, and says how much of each', async () => {
    const free = await freeBytes(root);
    await expect(checkFreeSpace({ dir: root, needed: free + 1e9 })).rejects.toThrow(NoSpaceError);
    const refused = await checkFreeSpace({ dir: root, needed: 5e8, reserve: free, what: 'the backup of portal' }).catch(
      (error: Error) => error,
    );
    expect(refused).toBeInstanceOf(NoSpaceError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^not enough space in ${root}: the backup of portal needs about 0\\.50 GB and [\\d.]+ GB must stay free, but [\\d.]+ GB are free\\.`,
      ),
    );
    expect((refused as Error).message).toMatch(/--keep|--objects list/);
    expect(await checkFreeSpace({ dir: root, needed: 1e6, reserve: 1e6 })).toMatchObject({ needed: 1e6 });
  });

  it('reads sizes as Kubernetes writes them', () => {
    expect(parseSize('1048576')).toBe(1_048_576);
    expect(parseSize('512Mi')).toBe(512 * 2 ** 20);
    expect(parseSize('2Gi')).toBe(2 * 2 ** 30);
    expect(parseSize('1G')).toBe(1e9);
    expect(() => parseSize('lots')).toThrow(/not a size/);
  });
});

describe('bounded parallel copies (eachBounded)', () => {
  it('runs at most the limit at once, and every item once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    async function* items() {
      for (let i = 0; i < 20; i += 1) yield i;
    }
    await eachBounded(items(), 4, async (i) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5 + (i % 3) * 5));
      running -= 1;
      done.push(i);
    });
    expect(most).toBe(4);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('stops taking items after a failure and throws it', async () => {
    const started: number[] = [];
    await expect(
      eachBounded([1, 2, 3, 4, 5, 6, 7, 8], 2, async (i) => {
        started.push(i);
        if (i === 2) throw new Error('S3 refused');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }),
    ).rejects.toThrow('S3 refused');
    expect(started.length).toBeLessThan(8);
  });
});

describe('the backup CronJob’s image (k8s/components/backup-cronjob runs the script in the identity image)', () => {
  it('holds the script, and the modules it imports are dependencies the identity image installs', async () => {
    const { readFile } = await import('node:fs/promises');
    const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');
    const dockerfile = await read('Dockerfile');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'), dockerfile.indexOf('AS service'));
    expect(runtime).toContain('COPY infra/backup/portal-backup.mjs ./infra/backup/portal-backup.mjs');
    const cronjob = await read('k8s/components/backup-cronjob/backup.yaml');
    expect(cronjob).toContain('image: portal-identity');
    expect(cronjob).toContain('node infra/backup/portal-backup.mjs backup');
    const script = await read('infra/backup/portal-backup.mjs');
    const imported = [...script.matchAll(/^import [^;]* from '([^.][^']*)';$/gm)].map((m) => m[1]!).filter((m) => !m.startsWith('node:'));
    expect(imported.sort()).toEqual(['@aws-sdk/client-s3', 'mongoose']);
    const identity = JSON.parse(await read('services/identity/package.json')) as { dependencies: Record<string, string> };
    const platform = JSON.parse(await read('packages/platform/package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(identity.dependencies)).toContain('@portal/platform');
    for (const module of imported) expect(Object.keys(platform.dependencies)).toContain(module);
  });
});

describe('the backup CronJob (k8s/components/backup-cronjob)', () => {
  it('prunes and checks the space in the backup itself, and a full disk fails the Job at once, without a retry', async () => {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(new URL('../../k8s/components/backup-cronjob/backup.yaml', import.meta.url), 'utf8');
    const { NO_SPACE_EXIT_CODE } = await import('../../infra/backup/portal-backup.mjs');
    const cronjob = text
      .split(/^---$/m)
      .map((doc) => parse(doc) as { kind: string; spec: any })
      .find((doc) => doc.kind === 'CronJob')!;
    const job = cronjob.spec.jobTemplate.spec;
    const container = job.template.spec.containers[0];
    const command = container.args.join(' ');
    // One command: retention before the copy (backup --root --keep), never `backup && prune`.
    expect(command).toMatch(/portal-backup\.mjs backup .*--root \/backups --keep "\$BACKUP_KEEP"/);
    expect(command).not.toMatch(/&&/);
    expect(command).toMatch(/--objects "\$BACKUP_OBJECTS" --reserve "\$BACKUP_RESERVE"/);
    const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(env.BACKUP_OBJECTS).toBe('list');
    expect(parseSize(env.BACKUP_RESERVE)).toBeGreaterThan(0);
    expect(job.podFailurePolicy.rules).toContainEqual({
      action: 'FailJob',
      onExitCodes: { containerName: 'backup', operator: 'In', values: [NO_SPACE_EXIT_CODE] },
    });
  });
});
