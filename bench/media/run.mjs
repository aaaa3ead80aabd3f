// Media worker throughput: how long the worker's own transcoding takes for a phone-like video,
// a recording and a photo, against the length of the clip (x realtime) measured in the same run.
// Usage: npm run build && node bench/media/run.mjs [--seconds 30] [--rounds 2]
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { mediaTools, noisyJpeg, opusRecording } from '../lib/portal.mjs';

const run = promisify(execFile);
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, rounds: { type: 'string', default: '2' } } });
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const { platform, ffmpeg } = await mediaTools().catch(() => {
  console.error('Build first: npm run build');
  process.exit(1);
});
const { transcodeVideo } = await import('../../services/media-worker/dist/processing/video.js');
const { transcodeAudio } = await import('../../services/media-worker/dist/processing/audio.js');
const { stillImages } = await import('../../services/media-worker/dist/processing/still-images.js');

const dir = mkdtempSync(join(tmpdir(), 'bench-media-'));
try {
  const video = join(dir, 'phone.mp4');
  const audio = join(dir, 'memo.webm');
  console.log(`making a ${seconds} s 1080p30 H.264 clip and a ${seconds} s Opus recording...`);
  await run(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=30:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=300:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-b:v',
    '12M',
    '-c:a',
    'aac',
    '-shortest',
    video,
  ]);
  await opusRecording(ffmpeg, audio, seconds);
  const photo = join(dir, 'photo.jpg');
  // Noise compresses like a real photo does (badly); a flat colour would flatter every encoder.
  writeFileSync(photo, await noisyJpeg(4032, 3024, 90));

  const timed = async (work) => {
    const start = process.hrtime.bigint();
    await work();
    return Number(process.hrtime.bigint() - start) / 1e9;
  };
  const rows = [];
  for (let round = 1; round <= rounds; round++) {
    const out = mkdtempSync(join(dir, 'out-'));
    const probeVideo = await platform.probeMedia(video);
    rows.push({
      round,
      kind: 'video 1080p → 720p H.264',
      s: await timed(() => transcodeVideo(video, probeVideo, out, () => {})),
      clip: seconds,
    });
    rows.push({ round, kind: 'audio Opus → AAC', s: await timed(() => transcodeAudio(audio, out, () => {})), clip: seconds });
    rows.push({ round, kind: 'photo 12 MP → WebP + thumb + ThumbHash', s: await timed(() => stillImages(photo)), clip: null });
  }
  console.log(`\n${cpus().length} cores (${cpus()[0]?.model}), ffmpeg ${ffmpeg}`);
  console.log('round | work                                   | seconds | x realtime (clip length / processing time)');
  for (const row of rows) {
    console.log(
      `${String(row.round).padEnd(5)} | ${row.kind.padEnd(38)} | ${row.s.toFixed(2).padStart(7)} | ${row.clip ? (row.clip / row.s).toFixed(2) : '-'}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
