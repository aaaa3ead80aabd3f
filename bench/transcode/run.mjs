// bench/transcode: what transcoding a phone video and a voice recording through the media worker
// costs, against the same ffmpeg command run alone, side by side in the same run (bench/transcode/README.md).
//   worker: the job handler as in production: original fetched from the blob store, probed,
//           transcoded (fluent-ffmpeg), output probed, poster frame and its WebP copies (video),
//           derivatives stored, result event published.
//   bare:   the worker's own transcoding ffmpeg command (recorded from the worker's warm-up
//           job: same binary, same arguments), spawned directly on a copy of the same file.
//   phone:  a phone's video as it arrives (1080p30 H.264 High/AAC in MOV, 3 minutes, a location
//           atom and a display rotation): seconds from the stored upload to `ready`, with
//           MEDIA_TRANSCODE_POLICY=always (transcoded first) and playable-first (a remux first, the
//           720p copy in a second job, timed apart), in the same rounds; both copies are searched
//           for the position (ffprobe tags and bytes) and the rotation is checked.
// Usage: npm run build && npm run bench:transcode [-- --seconds 60 --rounds 3 --voice-rounds 7 --phone-rounds 2]
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, percentCell as pct } from '../lib/measure.mjs';
import { ROOT, UsageError, gitDescribe, intOption, machineSummary, saveResult, stampOf } from '../lib/runner.mjs';
import { fmt, interleavedRounds, runWorkerVsBare, startHarnesses, summarize, workerAndBare } from '../lib/worker-vs-bare.mjs';

const run = promisify(execFile);
const HELP = `npm run bench:transcode -- [--seconds 60] [--rounds 3 (video)] [--voice-rounds 7] [--phone-rounds 2] [--phone-seconds 180] [--phone-clip <a phone video made by an earlier run>] [--phone-policies always,playable-first] [--no-phone-swap] [--only video|voice|phone] [--compare-worker <dist folder of another build>] [--label text] [--keep]`;
const TARGET = 1.1;
/** The phone case: seconds from the stored upload to `ready` with playable-first. */
const PHONE_TARGET_SECONDS = 5;
const LOCATION = '+48.8584+002.2945/';
const MEDIA = { video: 3, voice: 4 }; // MEDIA_TYPES.video, MEDIA_TYPES.audio

// The run's settings, set once at its start.
let ffprobe;
let values, seconds, videoRounds, voiceRounds, phoneRounds, phoneSeconds, kinds, ffmpeg, dir;

const options = {
  seconds: { type: 'string', default: '60' },
  rounds: { type: 'string', default: '3' },
  'voice-rounds': { type: 'string', default: '7' },
  'phone-rounds': { type: 'string', default: '2' },
  'phone-seconds': { type: 'string', default: '180' },
  'phone-clip': { type: 'string', default: '' },
  'phone-policies': { type: 'string', default: 'always,playable-first' },
  'no-phone-swap': { type: 'boolean', default: false },
  only: { type: 'string', default: '' },
};
await runWorkerVsBare('transcode', { help: HELP, options, budgetMinutes: 60 }, async (parsed, tempDir) => {
  values = parsed;
  dir = tempDir;
  seconds = intOption('seconds', values.seconds, 60, 5, 600);
  videoRounds = intOption('rounds', values.rounds, 3, 1, 20);
  voiceRounds = intOption('voice-rounds', values['voice-rounds'], 7, 1, 50);
  phoneRounds = intOption('phone-rounds', values['phone-rounds'], 2, 1, 20);
  phoneSeconds = intOption('phone-seconds', values['phone-seconds'], 180, 5, 600);
  kinds = values.only ? [values.only] : ['video', 'voice', 'phone'];
  if (!kinds.every((kind) => kind === 'video' || kind === 'voice' || kind === 'phone'))
    throw new UsageError('--only is video, voice or phone');
  const { locateFfmpeg } = await import(pathToFileURL(join(ROOT, 'packages/platform/dist/index.js')).href);
  ({ ffmpeg, ffprobe } = locateFfmpeg());
  await measure();
});

/** The clips: what a phone sends (1080p30 H.264 + AAC, ~12 Mbit/s) and what Chrome records (Opus in WebM). */
async function makeClips(length, suffix) {
  const video = join(dir, `phone${suffix}.mp4`);
  const voice = join(dir, `voice${suffix}.webm`);
  if (kinds.includes('video'))
    await run(ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=1920x1080:rate=30:duration=${length}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:beep_factor=4:duration=${length}`,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-profile:v',
      'high',
      '-b:v',
      '12M',
      '-maxrate',
      '14M',
      '-bufsize',
      '16M',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-ac',
      '2',
      '-shortest',
      video,
    ]);
  // A voice-like signal: a tone with a syllable-rate tremolo over quiet pink noise, mono, 48 kHz.
  if (kinds.includes('voice'))
    await run(ffmpeg, [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=180:duration=${length},tremolo=f=4:d=0.8`,
      '-f',
      'lavfi',
      '-i',
      `anoisesrc=color=pink:amplitude=0.05:duration=${length}`,
      '-filter_complex',
      'amix=inputs=2:duration=shortest',
      '-ar',
      '48000',
      '-ac',
      '1',
      '-c:a',
      'libopus',
      '-b:a',
      '48k',
      voice,
    ]);
  return { video, voice };
}

async function measure() {
  console.log(`making the clips: ${seconds} s 1080p30 H.264/AAC and a ${seconds} s Opus voice recording (and 3 s ones for the warm-up)...`);
  const warmClips = await makeClips(3, '-warm');
  const clips = await makeClips(seconds, '');
  for (const kind of kinds.filter((k) => k !== 'phone')) console.log(`  ${kind}: ${(statSync(clips[kind]).size / 1e6).toFixed(1)} MB`);

  const workRoot = join(dir, 'work');
  const harnesses = await startHarnesses({ dir, workRoot, compareWorker: values['compare-worker'] });
  const { worker, compare } = harnesses;

  const report = {
    bench: 'transcode',
    label: values.label,
    date: new Date().toISOString(),
    commit: gitDescribe(['services/media-worker', 'packages/platform']),
    machine: machineSummary(),
    settings: {
      seconds,
      videoRounds,
      voiceRounds,
      compareWorker: values['compare-worker'] || null,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
      ffmpeg,
    },
    target: TARGET,
    results: {},
  };

  for (const kind of kinds.filter((k) => k !== 'phone')) {
    // Warm-up job on the short clip: loads everything, and shows which ffmpeg command the worker runs.
    const warm = await worker.call({ op: 'job', file: warmClips[kind], mediaType: MEDIA[kind] });
    if (warm.result.status !== 'ready') throw new Error(`the worker failed the ${kind} warm-up: ${warm.result.error}`);
    const output = kind === 'video' ? 'display.mp4' : 'display.m4a';
    const transcode = warm.processes.find((p) => p.command === ffmpeg && p.args.some((arg) => String(arg).endsWith(`/${output}`)));
    if (!transcode) throw new Error(`no ffmpeg command writing ${output} was seen in the worker's job`);
    const jobDir = transcode.args.find((arg) => String(arg).endsWith(`/${output}`)).slice(0, -output.length - 1);
    console.log(
      `\n${kind}: the worker's transcoding command (run alone as the baseline):\n  ffmpeg ${transcode.args.map((arg) => String(arg).replace(jobDir, '<job>')).join(' ')}`,
    );

    if (compare) await compare.call({ op: 'job', file: warmClips[kind], mediaType: MEDIA[kind] });

    const targets = workerAndBare(
      harnesses,
      {
        file: clips[kind],
        mediaType: MEDIA[kind],
        what: kind,
        detail: (answer) => ({ duration: answer.result.duration, processes: answer.processes }),
      },
      {
        dir,
        copyName: 'original',
        bareWork: (bare, own) => {
          const args = transcode.args.map(String).map((arg) => (arg.startsWith(jobDir) ? own + arg.slice(jobDir.length) : arg));
          return bare.call({ op: 'command', command: ffmpeg, args });
        },
      },
    );
    const keys = Object.keys(targets);
    const rounds = kind === 'video' ? videoRounds : voiceRounds;
    console.log(`measuring: ${rounds} rounds of ${keys.join(', ')}, in a rotating order`);
    const measured = await interleavedRounds(rounds, targets);
    const summary = summarize(measured, keys, 'bare');
    const ratio = summary.ratios.worker;
    console.log(
      `  median  ${keys.map((key) => `${key} ${fmt(summary.medians[key])} s`).join('   ')}   (${(seconds / summary.medians.worker).toFixed(1)}x realtime through the worker)`,
    );
    console.log(
      `  ${kind}: worker / bare = ${ratio.toFixed(3)} (median of the per-round ratios ${summary.ratiosOfRounds.worker.toFixed(3)})   target <= ${TARGET}: ${ratio <= TARGET ? 'met' : 'NOT met'}`,
    );
    if (compare) console.log(`  ${kind}: compare / bare = ${summary.ratios.compare.toFixed(3)} (${values['compare-worker']})`);
    // The same question, less exposed to other work on the machine: what the worker spends
    // outside its transcoding ffmpeg (fetching, probing, poster, storing, publishing), added to
    // the bare command's median.
    const outside = {};
    for (const key of keys.filter((k) => k !== 'bare')) {
      outside[key] = median(
        measured.map((row) => {
          const main = row[`${key}Detail`].processes.find(
            (p) => p.command === ffmpeg && p.args.some((arg) => String(arg).endsWith(`/${output}`)),
          );
          return row[key] - (main?.seconds ?? 0);
        }),
      );
      console.log(
        `  ${key}: ${fmt(outside[key])} s outside the transcoding command (median); (bare + that) / bare = ${((summary.medians.bare + outside[key]) / summary.medians.bare).toFixed(3)}`,
      );
    }
    for (const key of keys.filter((k) => k !== 'bare')) {
      console.log(`  ${key}'s last job, process by process (s from the job's start):`);
      for (const p of measured.at(-1)[`${key}Detail`].processes) {
        console.log(`    at ${p.atSeconds.toFixed(3).padStart(7)}  ${(p.seconds ?? NaN).toFixed(3).padStart(7)} s  ${describe(p, ffmpeg)}`);
      }
    }
    if (summary.otherCpuMax > 0.25)
      console.log(
        `  note: other work used up to ${pct(summary.otherCpuMax)} of the machine during a measurement; the ratio is noisier than on a quiet machine.`,
      );
    for (const row of measured) {
      for (const key of keys.filter((k) => k !== 'bare')) {
        row[`${key}Detail`].processes = row[`${key}Detail`].processes.map((p) => ({
          what: describe(p, ffmpeg),
          atSeconds: p.atSeconds,
          seconds: p.seconds,
        }));
      }
    }
    report.results[kind] = {
      input: { bytes: statSync(clips[kind]).size, seconds },
      command: transcode.args.map((arg) => String(arg).replace(jobDir, '<job>')),
      medians: summary.medians,
      ratio,
      ratios: summary.ratios,
      ratiosOfRounds: summary.ratiosOfRounds,
      secondsOutsideTranscode: outside,
      met: ratio <= TARGET,
      rounds: measured,
    };
  }
  if (kinds.includes('phone')) report.results.phone = await measurePhone(worker);
  console.log('\n  (ratios of medians measured side by side in this run; the seconds themselves vary with the machine)');
  console.log(`\nresults: ${saveResult('transcode', stampOf(new Date()), report)}`);
}

/**
 * A phone's video: 1080p30 H.264 High + AAC-LC at about 12 Mbit/s in MOV, with the position in
 * ©xyz and the picture turned by a display matrix (set on a stream copy: ffmpeg 5.1 writes the
 * rotate tag as the matrix there).
 */
async function makePhoneClip(length, suffix) {
  const upright = join(dir, `phone-upright${suffix}.mp4`);
  const clip = join(dir, `phone${suffix}.mov`);
  await run(
    ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=1920x1080:rate=30:duration=${length}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:beep_factor=4:duration=${length}:sample_rate=48000`,
      '-c:v',
      'libx264',
      '-preset',
      'superfast',
      '-profile:v',
      'high',
      '-b:v',
      '12M',
      '-maxrate',
      '14M',
      '-bufsize',
      '16M',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-ac',
      '2',
      '-shortest',
      upright,
    ],
    { timeout: 30 * 60_000 },
  );
  await run(ffmpeg, [
    '-v',
    'error',
    '-y',
    '-i',
    upright,
    '-c',
    'copy',
    '-metadata',
    `location=${LOCATION}`,
    '-metadata:s:v:0',
    'rotate=90',
    clip,
  ]);
  return clip;
}

/** What ffprobe and a byte search find of the position and the rotation in a display copy. */
async function inspectCopy(path) {
  const { stdout } = await run(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], {
    maxBuffer: 8 * 1024 * 1024,
  });
  const probe = JSON.parse(stdout);
  const video = probe.streams.find((stream) => stream.codec_type === 'video');
  const tags = JSON.stringify([probe.format.tags ?? {}, ...probe.streams.map((stream) => stream.tags ?? {})]);
  const bytes = readFileSync(path);
  const markers = ['48.8584', '\u00a9xyz', 'loci', 'ISO6709'].filter((marker) => bytes.includes(Buffer.from(marker, 'latin1')));
  return {
    codec: `${video.codec_name} ${video.profile} ${video.width}x${video.height}`,
    rotation: video.side_data_list?.find((side) => typeof side.rotation === 'number')?.rotation ?? 0,
    locationInTags: /location|48\.8584/i.test(tags),
    locationInBytes: markers,
  };
}

async function measurePhone(worker) {
  console.log(
    `\nphone: making a ${phoneSeconds} s 1080p30 H.264 High/AAC MOV with a location atom and a display rotation (and a 3 s one for the warm-up)...`,
  );
  // --phone-clip: the clip of an earlier run (made in minutes on a busy machine), and its warm-up
  // beside it (<name>-warm.mov, or the clip itself).
  const given = values['phone-clip'];
  const warmGiven = given && given.replace(/\.mov$/, '-warm.mov');
  const warmClip = given
    ? warmGiven !== given && statSync(warmGiven, { throwIfNoEntry: false })
      ? warmGiven
      : given
    : await makePhoneClip(3, '-warm');
  const clip = given || (await makePhoneClip(phoneSeconds, ''));
  const policies = values['phone-policies'].split(',').map((policy) => policy.trim());
  if (!policies.every((policy) => policy === 'always' || policy === 'playable-first'))
    throw new UsageError('--phone-policies names always and/or playable-first');
  const swap = !values['no-phone-swap'];
  console.log(`  phone: ${(statSync(clip).size / 1e6).toFixed(1)} MB`);
  for (const policy of policies) {
    const warm = await worker.call({ op: 'job', file: warmClip, mediaType: MEDIA.video, policy, swap });
    if (warm.result.status !== 'ready') throw new Error(`the worker failed the phone warm-up (${policy}): ${warm.result.error}`);
  }
  const target = (policy) => ({
    pid: () => worker.pid,
    run: async () => {
      const answer = await worker.call({ op: 'job', file: clip, mediaType: MEDIA.video, policy, swap });
      if (answer.result.status !== 'ready')
        throw new Error(`the worker did not process the phone video (${policy}): ${answer.result.error}`);
      const copies = [];
      for (const path of answer.outputs) copies.push({ path: path.replace(dir, '<tmp>'), ...(await inspectCopy(path)) });
      return {
        seconds: answer.seconds,
        detail: { display: answer.result.display_copy ?? 'transcoded', followUpSeconds: answer.followUp?.seconds ?? null, copies },
      };
    },
  });
  console.log(
    `measuring: ${phoneRounds} rounds of ${policies.join(', ')}${swap && policies.includes('playable-first') ? ' (its 720p job run right after it, timed apart)' : ''}, in a rotating order`,
  );
  const measured = await interleavedRounds(phoneRounds, Object.fromEntries(policies.map((policy) => [policy, target(policy)])));
  const medians = Object.fromEntries(policies.map((policy) => [policy, median(measured.map((row) => row[policy]))]));
  const followUps = measured.map((row) => row['playable-firstDetail']?.followUpSeconds).filter((value) => typeof value === 'number');
  const followUp = followUps.length > 0 ? median(followUps) : null;
  const copies = measured.flatMap((row) => policies.flatMap((policy) => row[`${policy}Detail`].copies));
  const leaks = copies.filter((copy) => copy.locationInTags || copy.locationInBytes.length > 0);
  const ratio = medians.always && medians['playable-first'] ? medians.always / medians['playable-first'] : null;
  console.log(
    `  median seconds from the stored upload to ready: ${policies.map((policy) => `${policy} ${fmt(medians[policy])} s`).join('   ')}${ratio ? `   (always / playable-first = ${ratio.toFixed(1)})` : ''}`,
  );
  if (followUp !== null)
    console.log(`  playable-first: the 720p job ${fmt(followUp)} s more (median), after which its copy replaces the first`);
  if (medians['playable-first'] !== undefined)
    console.log(`  playable-first <= ${PHONE_TARGET_SECONDS} s: ${medians['playable-first'] <= PHONE_TARGET_SECONDS ? 'met' : 'NOT met'}`);
  for (const copy of copies.slice(-3))
    console.log(
      `  copy ${copy.path}: ${copy.codec}, rotation ${copy.rotation}, location in tags ${copy.locationInTags}, in bytes ${copy.locationInBytes.join(',') || 'none'}`,
    );
  console.log(`  position in any copy: ${leaks.length === 0 ? 'none' : `FOUND in ${leaks.length}`}`);
  if (leaks.length > 0) throw new Error('a display copy carries the position');
  const otherCpuMax = Math.max(...measured.flatMap((row) => policies.map((policy) => row[`${policy}Cpu`].other)));
  if (otherCpuMax > 0.25)
    console.log(
      `  note: other work used up to ${pct(otherCpuMax)} of the machine during a measurement; the seconds are slower than on a quiet machine, the ratio is what compares.`,
    );
  return {
    input: { bytes: statSync(clip).size, seconds: given ? null : phoneSeconds, clip: given || null },
    policies,
    swap,
    medians,
    ratio,
    followUpMedian: followUp,
    target: PHONE_TARGET_SECONDS,
    met: medians['playable-first'] !== undefined ? medians['playable-first'] <= PHONE_TARGET_SECONDS : null,
    otherCpuMax,
    rounds: measured,
  };
}

function describe(p, ffmpegPath) {
  const name = p.command === ffmpegPath ? 'ffmpeg' : p.command.split('/').pop();
  const args = p.args.map((arg) => String(arg).replace(/^.*\/bench-\d+\.r1\//, '<job>/'));
  const text = `${name} ${args.join(' ')}`;
  return text.length > 110 ? `${text.slice(0, 107)}...` : text;
}
