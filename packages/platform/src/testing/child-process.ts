import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';

export interface ScriptProcess {
  child: ChildProcess;
  /** Resolves with the first stdout line that matches. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGKILL, then waits for the exit: a crash, not a shutdown. */
  kill(): Promise<void>;
}

/**
 * Runs a TypeScript file in a separate Node process (through tsx, with the workspace packages'
 * "source" export condition), for tests that need a process to die for real.
 */
export function runTypeScript(file: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): ScriptProcess {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    child,
    waitForLine(pattern, timeoutMs = 20_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)),
          timeoutMs,
        );
        waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`process exited (${code}) before printing ${pattern}; stderr: ${stderr.slice(-2000)}`));
        });
      });
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
