// Child process of bench/image and bench/transcode: the baseline, the same work done bare.
//   sharp:  the display copy and the thumbnail of a photo with the same sharp calls and options as
//           the worker (services/media-worker/src/processing/still-images.ts), read from a file
//           and written to files. No blob store, no events, no logger.
//   ffmpeg: one ffmpeg command, the exact arguments the worker ran, spawned directly; its
//           output is drained as the worker's is, and it must exit with 0.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';

async function sharpDisplayAndThumbnail(file, outDir) {
  const base = () => sharp(file, { limitInputPixels: 80_000_000, animated: false }).rotate();
  const display = await base()
    .resize({ width: 1600, height: 1600, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer();
  const thumbnail = await base()
    .resize({ width: 480, height: 480, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 70 })
    .toBuffer();
  await writeFile(join(outDir, 'display.webp'), display);
  await writeFile(join(outDir, 'thumb.webp'), thumbnail);
  return { displayBytes: display.length, thumbnailBytes: thumbnail.length };
}

function runCommand(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    child.stdout.on('data', () => {});
    child.stderr.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-2000);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${tail}`))));
  });
}

process.on('message', async (message) => {
  try {
    if (message.op === 'sharp') {
      const start = performance.now();
      const sizes = await sharpDisplayAndThumbnail(message.file, message.outDir);
      process.send({ id: message.id, ok: true, seconds: (performance.now() - start) / 1000, ...sizes });
    } else if (message.op === 'command') {
      const start = performance.now();
      await runCommand(message.command, message.args);
      process.send({ id: message.id, ok: true, seconds: (performance.now() - start) / 1000 });
    }
  } catch (error) {
    process.send({ id: message.id, ok: false, error: String(error?.stack ?? error) });
  }
});
// The bench holds the other end of the IPC channel: when it goes away by any means, so does this.
process.once('disconnect', () => process.exit(1));
process.send({ ready: true });
