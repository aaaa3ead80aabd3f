import { describe, expect, it } from 'vitest';
import { execFileOffThread, locateFfprobe, probeMedia } from '@portal/platform';

// Programs the services start (ffprobe) run from a worker thread: real processes, real output.
describe('running a program off the event loop thread', () => {
  it("answers the program's output, and many at once", async () => {
    const outputs = await Promise.all(Array.from({ length: 12 }, (_, i) => execFileOffThread('/bin/echo', [`hello ${i}`])));
    expect(outputs).toEqual(Array.from({ length: 12 }, (_, i) => `hello ${i}\n`));
    expect(await execFileOffThread(locateFfprobe(), ['-v', 'error', '-version'])).toMatch(/ffprobe version/);
  });

  it('fails as execFile does: exit code with stderr, a missing program, a timeout', async () => {
    await expect(execFileOffThread('/bin/sh', ['-c', 'echo broken >&2; exit 3'])).rejects.toMatchObject({ code: 3, stderr: 'broken\n' });
    await expect(execFileOffThread('/no/such/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(execFileOffThread('/bin/sleep', ['5'], { timeout: 200 })).rejects.toMatchObject({ killed: true, signal: 'SIGTERM' });
    // ...and keeps working afterwards.
    expect(await execFileOffThread('/bin/echo', ['still here'])).toBe('still here\n');
  });

  it('probes a file that is not media as an error, not a crash', async () => {
    await expect(probeMedia(new URL(import.meta.url).pathname)).rejects.toThrow();
  });
});
