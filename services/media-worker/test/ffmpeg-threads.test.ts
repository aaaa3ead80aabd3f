import { describe, expect, it } from 'vitest';
import { FFMPEG_TIME_LIMIT_SECONDS } from '@portal/platform';
import { FFMPEG_THREADS, ffmpegCommand } from '../src/processing/ffmpeg-runner.js';

// ffmpeg sizes its decoder and filter threads by the cores it sees, which in a pod are the
// node's: a 4K HEVC decode on a large node held 0.88 GB. Every run decodes and filters with
// FFMPEG_THREADS (what the workers' memory requests are sized for), and is stopped at the limit
// the video cap agrees with.
describe('ffmpeg runs', () => {
  it('decode and filter with a fixed number of threads, given before the input, and stop at the time limit', () => {
    const command = ffmpegCommand('/tmp/in.mov', 'mov', 10);
    const args = (command as unknown as { _getArguments(): string[] })._getArguments();
    const input = args.indexOf('-i');
    expect(FFMPEG_THREADS).toBe(2);
    expect(args.slice(0, input)).toEqual(expect.arrayContaining(['-threads', '2', '-filter_threads', '2', '-f', 'mov']));
    expect(args[args.indexOf('-threads') + 1]).toBe('2');
    expect(args.indexOf('-threads')).toBeLessThan(input);
    expect((command as unknown as { options: { timeout: number } }).options.timeout).toBe(FFMPEG_TIME_LIMIT_SECONDS);
  });
});
