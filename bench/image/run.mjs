// bench/image: what processing a phone photo through the media worker costs, against the same
// sharp operations in a bare script, measured side by side in the same run (see bench/image/README.md).
//   worker: the job handler as in production (original fetched from the blob store, display copy,
//           thumbnail and ThumbHash placeholder, derivatives stored, result event published).
//   bare:   the display copy and the thumbnail with the same sharp calls, file to file.
// Usage: npm run build && npm run bench:image [-- --rounds 15 --warmup 3 --label text]
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { percentCell as pct } from '../lib/measure.mjs';
import { gitDescribe, intOption, machineSummary, saveResult, stampOf } from '../lib/runner.mjs';
import { fmt, interleavedRounds, runWorkerVsBare, startHarnesses, summarize, workerAndBare } from '../lib/worker-vs-bare.mjs';

const HELP =
  'npm run bench:image -- [--rounds 15] [--warmup 3] [--label text] [--compare-worker <dist folder of another build>] [--keep (leave the temporary folder)]';
const TARGET = 1.2;
const IMAGE = 2; // MEDIA_TYPES.image

const options = { rounds: { type: 'string', default: '15' }, warmup: { type: 'string', default: '3' } };
await runWorkerVsBare('image', { help: HELP, options, budgetMinutes: 10 }, async (values, dir) => {
  const rounds = intOption('rounds', values.rounds, 15, 1, 50);
  const warmup = intOption('warmup', values.warmup, 3, 0, 10);
  const sharp = (await import('sharp')).default;
  // A 12-megapixel phone photo: 4032x3024, detail and sensor-like noise (compresses like a real
  // photo; a flat picture would flatter the decoder), JPEG quality 92, EXIF orientation 6 (taken
  // upright, stored sideways, as phones do), so the worker's rotate() has work to do.
  const photo = join(dir, 'photo.jpg');
  const pattern = await sharp({ create: { width: 1008, height: 756, channels: 3, background: '#000' } })
    .composite([{ input: Buffer.from(svgScene(1008, 756)), top: 0, left: 0 }])
    .png()
    .toBuffer();
  const noise = await sharp({ create: { width: 4032, height: 3024, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 18 } } })
    .png()
    .toBuffer();
  await sharp(pattern)
    .resize(4032, 3024, { kernel: 'cubic' })
    .composite([{ input: noise, blend: 'overlay' }])
    .jpeg({ quality: 92 })
    .withMetadata({ orientation: 6 })
    .toFile(photo);
  const photoInfo = await sharp(photo).metadata();
  console.log(
    `photo: ${photoInfo.width}x${photoInfo.height} JPEG, ${(statSync(photo).size / 1e6).toFixed(1)} MB, EXIF orientation ${photoInfo.orientation}`,
  );

  const harnesses = await startHarnesses({ dir, compareWorker: values['compare-worker'] });
  const compare = harnesses.compare;

  const targets = workerAndBare(
    harnesses,
    { file: photo, mediaType: IMAGE, what: 'photo', detail: (answer) => ({ output: `${answer.result.width}x${answer.result.height}` }) },
    { dir, copyName: 'photo.jpg', bareWork: (bare, own) => bare.call({ op: 'sharp', file: join(own, 'photo.jpg'), outDir: own }) },
  );
  const keys = Object.keys(targets);

  process.stdout.write(`warm-up: ${warmup} round(s)`);
  for (let i = 0; i < warmup; i++) {
    for (const key of keys) await targets[key].run();
    process.stdout.write('.');
  }
  console.log(`\nmeasuring: ${rounds} rounds of ${keys.join(', ')}, in a rotating order`);
  const measured = await interleavedRounds(rounds, targets);
  const summary = summarize(measured, keys, 'bare');
  const ratio = summary.ratios.worker;
  console.log('');
  console.log(`  median  ${keys.map((key) => `${key} ${fmt(summary.medians[key])} s`).join('   ')}`);
  console.log(
    `  worker / bare = ${ratio.toFixed(3)} (median of the per-round ratios ${summary.ratiosOfRounds.worker.toFixed(3)})   target <= ${TARGET}: ${ratio <= TARGET ? 'met' : 'NOT met'}`,
  );
  if (compare) console.log(`  compare / bare = ${summary.ratios.compare.toFixed(3)} (${values['compare-worker']})`);
  console.log('  (ratios of medians measured side by side in this run; the seconds themselves vary with the machine)');
  if (summary.otherCpuMax > 0.25)
    console.log(
      `  note: other work used up to ${pct(summary.otherCpuMax)} of the machine during a measurement; the ratio is noisier than on a quiet machine (more --rounds help).`,
    );

  const file = saveResult('image', stampOf(new Date()), {
    bench: 'image',
    label: values.label,
    date: new Date().toISOString(),
    commit: gitDescribe(['services/media-worker', 'packages/platform']),
    machine: machineSummary(),
    settings: { rounds, warmup, logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' },
    input: { width: photoInfo.width, height: photoInfo.height, bytes: statSync(photo).size, orientation: photoInfo.orientation },
    target: TARGET,
    compareWorker: values['compare-worker'] || null,
    medians: summary.medians,
    ratio,
    ratios: summary.ratios,
    ratiosOfRounds: summary.ratiosOfRounds,
    met: ratio <= TARGET,
    rounds: measured,
  });
  console.log(`\nresults: ${file}`);
});

/** A street-like scene (sky, buildings, windows, text) for the photo's detail. */
function svgScene(width, height) {
  let shapes = '';
  for (let i = 0; i < 40; i++) {
    const x = (i * 97) % width;
    const h = 150 + ((i * 53) % 400);
    shapes += `<rect x="${x}" y="${height - h}" width="${60 + (i % 5) * 15}" height="${h}" fill="hsl(${(i * 37) % 360},35%,${25 + (i % 4) * 10}%)"/>`;
    for (let w = 0; w < 6; w++)
      shapes += `<rect x="${x + 8 + (w % 2) * 25}" y="${height - h + 12 + w * 22}" width="14" height="12" fill="#f4e7b0"/>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6fa3d8"/><stop offset="1" stop-color="#f3d9b1"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#sky)"/>${shapes}
    <text x="40" y="80" font-size="48" font-family="sans-serif" fill="#222">Main Street &amp; First Avenue</text></svg>`;
}
