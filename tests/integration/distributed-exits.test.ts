// The distributed suite's wait for the processes its disposed portals told to stop
// (tests/support/distributed-exits.ts): it ends when they are gone, and a process that ignores
// SIGTERM is killed and fails the run, so a service that hangs on shutdown cannot go unnoticed.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { markStopping, stoppingProcesses } from '../support/distributed-exits.js';

/** A Node process that prints "up" once its SIGTERM handler is in place. */
async function service(onTerm: 'exit' | 'ignore'): Promise<ChildProcess> {
  const handler = onTerm === 'exit' ? 'setTimeout(() => process.exit(0), 300)' : '';
  const child = spawn(
    process.execPath,
    ['-e', `process.on('SIGTERM', () => { ${handler} }); console.log('up'); setInterval(() => {}, 1000);`],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  await once(child.stdout!, 'data');
  return child;
}

describe('the wait for the processes of disposed portals', () => {
  it('ends once every process told to stop has exited, and forgets each one as it exits', async () => {
    const { dir, teardown } = stoppingProcesses(10_000);
    const children = await Promise.all([service('exit'), service('exit')]);
    const exits = children.map((child, n) => markStopping(dir, `service-${n}`, child));
    expect(children.every((child) => existsSync(`${dir}/${child.pid}`))).toBe(true);
    for (const child of children) child.kill('SIGTERM');
    await teardown();
    await Promise.all(exits);
    expect(children.map((child) => child.exitCode)).toEqual([0, 0]);
    expect(existsSync(dir)).toBe(false);
  });

  it('kills a process still running after the grace and fails with its name', async () => {
    const { dir, teardown } = stoppingProcesses(500);
    const stuck = await service('ignore');
    const exited = markStopping(dir, 'identity', stuck);
    stuck.kill('SIGTERM');
    await expect(teardown()).rejects.toThrow(`still running 0.5 s after SIGTERM, killed: identity (${stuck.pid})`);
    await exited;
    expect(stuck.signalCode).toBe('SIGKILL');
  });
});
