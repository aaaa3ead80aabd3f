// bench/faces: how well and at what cost the media worker finds and blurs faces (see bench/faces/README.md).
//   quality: recall and false positives per image at each threshold on a labelled set made only
//            of pictures that ship in registry packages (the face-api package's demo photos, faces
//            counted by eye; mirrored and phone-sized copies; crops of them without faces).
//   time:    per 12-megapixel phone photo and per minute of 1080p video, the product's face work
//            (decode, detect, follow, pixelate, encode and store the public copies) against the
//            bare model on the same pictures already decoded, measured side by side in the same run.
// Usage: npm run build && npm run bench:faces [-- --rounds 8 --video-seconds 20 --video-rounds 2 --threshold 0.3]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cpuUsage } from 'node:process';
import {
  checkBuilt,
  gitDescribe,
  intOption,
  machineSummary,
  makeTempDir,
  parseOptions,
  ROOT,
  runBench,
  stampOf,
  startWatchdog,
  writeResult,
} from '../lib/runner.mjs';

const HELP =
  'npm run bench:faces -- [--rounds 8] [--video-seconds 20] [--video-rounds 2] [--threshold 0.3] [--label text]\n' +
  '  --threshold: the score reported as chosen (FACE_MIN_CONFIDENCE); every threshold of the table is measured anyway';
const THRESHOLDS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
const dist = (path) => join(ROOT, 'services/media-worker/dist', path);

await runBench('faces', async () => {
  const values = parseOptions(
    {
      rounds: { type: 'string', default: '8' },
      'video-seconds': { type: 'string', default: '20' },
      'video-rounds': { type: 'string', default: '2' },
      threshold: { type: 'string', default: '0.3' },
      label: { type: 'string' },
    },
    HELP,
  );
  const rounds = intOption('rounds', values.rounds, 8, 1, 50);
  const videoSeconds = intOption('video-seconds', values['video-seconds'], 20, 4, 120);
  const videoRounds = intOption('video-rounds', values['video-rounds'], 2, 1, 10);
  const chosen = Number(values.threshold);
  if (!THRESHOLDS.includes(chosen)) throw new Error(`--threshold must be one of ${THRESHOLDS.join(', ')}`);
  checkBuilt(['services/media-worker/dist/faces/face-work.js']);
  startWatchdog(30 * 60);
  const dir = makeTempDir('bench-faces-');
  const sharp = (await import('sharp')).default;
  const { createFaceDetector } = await import(dist('faces/face-detector.js'));
  const { checkPhoto, checkVideo } = await import(dist('faces/face-work.js'));
  const { uprightRgb, pixelatedPicture, DETECTION_SIZE } = await import(dist('faces/picture-faces.js'));
  const { stillImages } = await import(dist('processing/still-images.js'));
  const { DISPLAY_VIDEO_ENCODING } = await import(dist('processing/video.js'));
  const { locateFfmpeg } = await import(join(ROOT, 'packages/platform/dist/index.js'));
  const ffmpeg = locateFfmpeg().ffmpeg;
  const demo = join(dirname(createRequire(import.meta.url).resolve('@vladmandic/face-api/package.json')), 'demo');
  const machine = machineSummary();
  console.log(
    `faces bench: ${machine.cores} cores (${machine.cpu}), node ${machine.node}, load average ${machine.loadAverageAtStart.join(' ')}`,
  );

  // --- the labelled set ------------------------------------------------------------------------
  // Faces counted by eye in the package's six photos (tests/support/face-fixtures.ts has the same
  // counts); crops chosen (by eye, in fractions of the picture) to hold no face.
  const SAMPLES = [
    { name: 'sample1.jpg', faces: 3, empty: { top: 0.6, left: 0, bottom: 1, right: 1 } },
    { name: 'sample2.jpg', faces: 3, empty: { top: 0.45, left: 0, bottom: 1, right: 1 } },
    { name: 'sample3.jpg', faces: 3, empty: { top: 0.55, left: 0, bottom: 1, right: 1 } },
    { name: 'sample4.jpg', faces: 4, empty: { top: 0.45, left: 0, bottom: 1, right: 1 } },
    { name: 'sample5.jpg', faces: 5, empty: { top: 0.62, left: 0.5, bottom: 1, right: 1 } },
    { name: 'sample6.jpg', faces: 4, empty: { top: 0.55, left: 0, bottom: 1, right: 1 } },
  ];
  const set = [];
  for (const sample of SAMPLES) {
    const file = join(demo, sample.name);
    const meta = await sharp(file).metadata();
    set.push({ what: `${sample.name}`, faces: sample.faces, bytes: readFileSync(file) });
    set.push({ what: `${sample.name} mirrored`, faces: sample.faces, bytes: await sharp(file).flop().jpeg({ quality: 90 }).toBuffer() });
    // A phone's small copy (what a messaging app sends): the faces a third of their size.
    set.push({
      what: `${sample.name} at 640 px`,
      faces: sample.faces,
      bytes: await sharp(file).resize(640).jpeg({ quality: 85 }).toBuffer(),
    });
    const { top, left, bottom, right } = sample.empty;
    const crop = {
      left: Math.round(left * meta.width),
      top: Math.round(top * meta.height),
      width: Math.round((right - left) * meta.width),
      height: Math.round((bottom - top) * meta.height),
    };
    set.push({
      what: `${sample.name} without faces (crop)`,
      faces: 0,
      bytes: await sharp(file).extract(crop).jpeg({ quality: 90 }).toBuffer(),
    });
  }
  // Pictures of nothing: a test card, a wall, sensor noise.
  const testCard = join(dir, 'testcard.png');
  execFileSync(ffmpeg, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720', '-frames:v', '1', testCard]);
  set.push({ what: 'test card', faces: 0, bytes: readFileSync(testCard) });
  set.push({
    what: 'plain wall',
    faces: 0,
    bytes: await sharp({ create: { width: 1600, height: 1200, channels: 3, background: { r: 150, g: 140, b: 120 } } })
      .jpeg()
      .toBuffer(),
  });
  set.push({
    what: 'noise',
    faces: 0,
    bytes: await sharp({ create: { width: 1600, height: 1200, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
      .jpeg()
      .toBuffer(),
  });
  const positives = set.filter((entry) => entry.faces > 0);
  const truth = positives.reduce((sum, entry) => sum + entry.faces, 0);
  console.log(`labelled set: ${set.length} pictures, ${positives.length} with ${truth} faces, ${set.length - positives.length} without`);

  // --- quality: every score once, thresholds applied afterwards ---------------------------------
  const probe = createFaceDetector({ minConfidence: Math.min(...THRESHOLDS) });
  const scores = [];
  for (const entry of set) {
    const rgb = await uprightRgb(entry.bytes, DETECTION_SIZE);
    scores.push((await probe.detect(rgb.data, rgb.width, rgb.height)).map((face) => face.score));
  }
  // Counted per picture (the labels are counts, not boxes): a picture with n faces where the
  // detector finds m counts min(n, m) found and max(0, m - n) false; on a picture without faces
  // every detection is false.
  const quality = THRESHOLDS.map((threshold) => {
    let found = 0;
    let falses = 0;
    set.forEach((entry, index) => {
      const m = scores[index].filter((score) => score >= threshold).length;
      found += Math.min(entry.faces, m);
      falses += Math.max(0, m - entry.faces);
    });
    return { threshold, recall: found / truth, falsePositivesPerImage: falses / set.length, missed: truth - found, falsePositives: falses };
  });
  console.log('\nthreshold  recall   false positives per picture  (missed, false)');
  for (const row of quality) {
    console.log(
      `${row.threshold.toFixed(2).padEnd(10)} ${row.recall.toFixed(3).padEnd(8)} ${row.falsePositivesPerImage.toFixed(3).padEnd(28)} (${row.missed}, ${row.falsePositives})${row.threshold === chosen ? '   <- chosen' : ''}`,
    );
  }
  const perPicture = set.map((entry, index) => ({
    what: entry.what,
    faces: entry.faces,
    found: scores[index].filter((score) => score >= chosen).length,
  }));
  for (const row of perPicture.filter((row) => row.found !== row.faces))
    console.log(`  at ${chosen}: ${row.what}: ${row.found} found, ${row.faces} there`);

  // The product's public copy of each picture with faces: what the detector still finds there.
  const detector = createFaceDetector({ minConfidence: chosen });
  let left = 0;
  for (const entry of positives) {
    const rgb = await uprightRgb(entry.bytes, DETECTION_SIZE);
    const found = await detector.detect(rgb.data, rgb.width, rgb.height);
    const blurred = await pixelatedPicture(entry.bytes, found, 1600);
    const again = await uprightRgb(blurred, DETECTION_SIZE);
    left += (await detector.detect(again.data, again.width, again.height)).length;
  }
  console.log(`\nfaces the detector still finds in the public (pixelated) copies of the ${positives.length} pictures: ${left}`);

  // --- time per phone photo ------------------------------------------------------------------------
  const work = { settings: { mode: 'auto', minConfidence: chosen, samplesPerSecond: 4 }, detector };
  const store = join(dir, 'store');
  mkdirSync(store, { recursive: true });
  let stored = 0;
  const put = async (name, body, contentType) => {
    const key = join(store, `${stored++}-${name}`);
    if (typeof body === 'string') writeFileSync(key, readFileSync(body));
    else writeFileSync(key, body);
    return { key, contentType };
  };
  // A 12-megapixel phone photo of the group (4032x3024, JPEG quality 92), as a phone stores it.
  const phone = join(dir, 'phone.jpg');
  await sharp(join(demo, 'sample5.jpg')).resize(4032, 3024, { fit: 'cover' }).jpeg({ quality: 92 }).toFile(phone);
  const phoneRgb = await uprightRgb(phone, DETECTION_SIZE);
  const timed = async (fn) => {
    const wall = performance.now();
    const cpu = cpuUsage();
    await fn();
    const used = cpuUsage(cpu);
    return { ms: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
  };
  const photoRuns = { bare: [], check: [], stills: [] };
  process.stdout.write(`\nphone photo: warm-up, then ${rounds} rounds of bare model, face check, display copies (rotating order)`);
  await detector.detect(phoneRgb.data, phoneRgb.width, phoneRgb.height);
  await checkPhoto(work, phone, { width: 1600, height: 1200 }, put);
  const photoTargets = {
    bare: () => detector.detect(phoneRgb.data, phoneRgb.width, phoneRgb.height),
    check: () => checkPhoto(work, phone, { width: 1600, height: 1200 }, put),
    stills: () => stillImages(phone),
  };
  const keys = Object.keys(photoTargets);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(round + i) % keys.length];
      photoRuns[key].push(await timed(photoTargets[key]));
    }
    process.stdout.write('.');
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const photo = Object.fromEntries(
    Object.entries(photoRuns).map(([key, list]) => [key, { ms: median(list.map((r) => r.ms)), cpuMs: median(list.map((r) => r.cpuMs)) }]),
  );
  console.log(
    `\n  bare model (one detection, picture decoded already): ${photo.bare.ms.toFixed(0)} ms\n` +
      `  face check as the worker does it (decode, detect, blurred display copy, thumbnail, placeholder, stored): ${photo.check.ms.toFixed(0)} ms` +
      ` = ${(photo.check.ms / photo.bare.ms).toFixed(2)} × the bare model\n` +
      `  the photo's display copy, thumbnail and placeholder without faces (for scale): ${photo.stills.ms.toFixed(0)} ms; ` +
      `the face check adds ${((photo.check.ms / photo.stills.ms) * 100).toFixed(0)} % to them`,
  );

  // --- time per minute of 1080p video ------------------------------------------------------------
  // A 1080p30 phone-like clip made from a group photo (the camera panning), its 720p copy made as
  // the worker makes it; the face work runs on the 720p copy.
  const source = join(dir, 'clip-1080p.mp4');
  const video = join(dir, 'clip-720p.mp4');
  execFileSync(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-loop',
    '1',
    '-framerate',
    '30',
    '-i',
    join(demo, 'sample3.jpg'),
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${videoSeconds}`,
    '-vf',
    `scale=2400:-2,crop=1920:1080:'t*${Math.round(400 / videoSeconds)}':'min(200,t*${Math.round(200 / videoSeconds)})',format=yuv420p`,
    '-t',
    String(videoSeconds),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-c:a',
    'aac',
    '-shortest',
    source,
  ]);
  const transcode = await timed(async () =>
    execFileSync(ffmpeg, [
      '-v',
      'error',
      '-y',
      '-i',
      source,
      '-vf',
      'scale=-2:720,format=yuv420p',
      ...DISPLAY_VIDEO_ENCODING,
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
      '-threads',
      '2',
      video,
    ]),
  );
  const poster = await sharp(join(demo, 'sample3.jpg')).resize(1280).webp().toBuffer();
  const picture = { width: 1280, height: 720, frameRate: '30/1', hasAudio: true, duration: videoSeconds };
  // The bare model on the same samples, decoded into memory beforehand (not timed).
  const frames = execFileSync(
    ffmpeg,
    ['-v', 'error', '-i', video, '-vf', 'fps=4,scale=640:360', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    {
      maxBuffer: 1 << 30,
    },
  );
  const frameSize = 640 * 360 * 3;
  const samples = Math.floor(frames.length / frameSize);
  const videoRuns = { bare: [], check: [] };
  let lastCheck = null;
  process.stdout.write(`\n1080p video (${videoSeconds} s, ${samples} samples): ${videoRounds} rounds of bare model and face check`);
  for (let round = 0; round < videoRounds; round++) {
    const order = round % 2 === 0 ? ['bare', 'check'] : ['check', 'bare'];
    for (const key of order) {
      if (key === 'bare') {
        videoRuns.bare.push(
          await timed(async () => {
            for (let i = 0; i < samples; i++) await detector.detect(frames.subarray(i * frameSize, (i + 1) * frameSize), 640, 360);
          }),
        );
      } else {
        const workDir = join(dir, `work-${round}`);
        mkdirSync(workDir, { recursive: true });
        videoRuns.check.push(
          await timed(async () => {
            lastCheck = await checkVideo(work, video, poster, picture, put, workDir, { niceness: 0, allowedMs: 30 * 60_000 });
          }),
        );
      }
      process.stdout.write('.');
    }
  }
  const perMinute = (ms) => ((ms / videoSeconds) * 60) / 1000;
  const videoFigures = {
    bare: { ms: median(videoRuns.bare.map((r) => r.ms)) },
    check: { ms: median(videoRuns.check.map((r) => r.ms)) },
    transcode720p: { ms: transcode.ms },
  };
  console.log(
    `\n  bare model (${samples} detections, frames decoded already): ${perMinute(videoFigures.bare.ms).toFixed(1)} s per minute of video\n` +
      `  face check as the worker does it (samples decoded, detected, followed; public 720p copy pixelated and encoded; poster): ` +
      `${perMinute(videoFigures.check.ms).toFixed(1)} s per minute = ${(videoFigures.check.ms / videoFigures.bare.ms).toFixed(2)} × the bare model\n` +
      `  the 720p transcode alone (for scale): ${perMinute(videoFigures.transcode720p.ms).toFixed(1)} s per minute\n` +
      `  faces followed in the clip: ${lastCheck?.faces.count}`,
  );
  await probe.close();
  await detector.close();

  writeResult('faces', stampOf(new Date()), {
    bench: 'faces',
    label: values.label ?? null,
    commit: gitDescribe(),
    machine,
    model: 'ssd_mobilenetv1 (@vladmandic/face-api 1.7.15, TensorFlow.js 4.22.0 WASM)',
    set: { pictures: set.length, withFaces: positives.length, faces: truth },
    quality,
    chosen,
    perPicture,
    facesLeftInPublicCopies: left,
    photo: { rounds, ...photo, ratioCheckToBare: photo.check.ms / photo.bare.ms },
    video: {
      seconds: videoSeconds,
      samples,
      rounds: videoRounds,
      secondsPerMinute: {
        bare: perMinute(videoFigures.bare.ms),
        check: perMinute(videoFigures.check.ms),
        transcode720p: perMinute(transcode.ms),
      },
      ratioCheckToBare: videoFigures.check.ms / videoFigures.bare.ms,
    },
  });
});
