import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eachBounded, prune } from '../../infra/backup/portal-backup.mjs';

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
    const imported = [...script.matchAll(/^import .* from '([^.][^']*)';$/gm)].map((m) => m[1]!).filter((m) => !m.startsWith('node:'));
    expect(imported.sort()).toEqual(['@aws-sdk/client-s3', 'mongoose']);
    const identity = JSON.parse(await read('services/identity/package.json')) as { dependencies: Record<string, string> };
    const platform = JSON.parse(await read('packages/platform/package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(identity.dependencies)).toContain('@portal/platform');
    for (const module of imported) expect(Object.keys(platform.dependencies)).toContain(module);
  });
});
