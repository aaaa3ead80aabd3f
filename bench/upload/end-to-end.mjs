// The end-to-end case of the upload bench: one phone-like video of about 1 GB (1080p30 H.264
// High / AAC-LC in MOV, with a location atom and a display rotation, at about 45 Mbit/s) sent the
// way the web app sends it (tus, the web app's chunks) through the all-in-one portal with its media
// worker on (MEDIA_TRANSCODE_POLICY as set, playable-first by default): the upload's time, the time
// from the upload complete to `ready` (the first display copy), then to the 720p copy's swap, and
// the memory of the portal's process and of every process it starts (ffmpeg, ffprobe) meanwhile.
// See README.md ("End to end: 1 GB, upload to ready").
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { ALL_IN_ONE_BUILT, mediaTools, noisyJpeg, registerParticipant, startAllInOne } from '../lib/portal.mjs';
import {
  ROOT,
  UsageError,
  checkBuilt,
  describeMachine,
  intOption,
  machineInfo,
  makeTempDir,
  orFail,
  parseOptions,
  runBench,
  saveResult,
  stampOf,
  startWatchdog,
} from '../lib/runner.mjs';
import { tusUpload, webChunkSize } from '../lib/tus.mjs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

const HELP = `
Usage: node bench/upload/end-to-end.mjs [options]

Makes a phone-like video of about --size (1080p30 H.264 High/AAC-LC MOV, about 45 Mbit/s, a
location atom and a display rotation: a 10 s clip repeated by a stream copy), uploads it with
tus in the web app's chunks through the all-in-one portal with its media worker on, and reports
the upload's time, the time from the upload complete to ready and to the 720p copy, and the peak
memory (RSS) of the portal's process and of the processes it starts. The video and the portal's
data folder are in a temporary folder, deleted after.

Options:
      --size <MB>          the video's size in MB (default 1000; 100 to 4000)
      --policy <name>      MEDIA_TRANSCODE_POLICY of the portal: playable-first (default) or always
      --no-swap            stop once the item is ready (do not wait for the 720p copy)
      --swap-timeout <s>   how long to wait for the 720p copy (default 3600)
  -h, --help
`;

function settingsFromArgs() {
  const values = parseOptions(
    { size: { type: 'string' }, policy: { type: 'string' }, 'no-swap': { type: 'boolean' }, 'swap-timeout': { type: 'string' } },
    HELP,
  );
  const policy = values.policy ?? 'playable-first';
  if (!['playable-first', 'always'].includes(policy)) throw new UsageError(`--policy must be playable-first or always (got ${policy})`);
  return {
    size: intOption('size', values.size, 1000, 100, 4000) * 1e6,
    policy,
    swap: !(values['no-swap'] ?? false),
    swapTimeoutS: intOption('swap-timeout', values['swap-timeout'], 3600, 60, 4 * 3600),
  };
}

/** The process and every process under it (ffmpeg, ffprobe and their `nice`), from /proc. */
function descendants(pid) {
  const found = [];
  const walk = (parent) => {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean)) {
        found.push(Number(child));
        walk(Number(child));
      }
    }
  };
  walk(pid);
  return found;
}

function statusOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '?';
    return { name, rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Samples the portal's RSS and that of its descendants every 100 ms, by phase. */
function memorySampler(pid) {
  const phases = {};
  let phase = 'start';
  const sample = () => {
    const portal = statusOf(pid);
    if (!portal) return;
    const entry = (phases[phase] ??= { portalPeak: 0, childPeak: 0, childName: null, totalPeak: 0 });
    let children = 0;
    for (const child of descendants(pid)) {
      const status = statusOf(child);
      if (!status) continue;
      children += status.rss;
      if (status.rss > entry.childPeak) {
        entry.childPeak = status.rss;
        entry.childName = status.name;
      }
    }
    entry.portalPeak = Math.max(entry.portalPeak, portal.rss);
    entry.totalPeak = Math.max(entry.totalPeak, portal.rss + children);
  };
  const timer = setInterval(sample, 100);
  sample();
  return {
    phase(name) {
      sample();
      phase = name;
      sample();
    },
    stop() {
      clearInterval(timer);
      sample();
      return { phases, portalHighWaterMark: statusOf(pid)?.hwm ?? null };
    },
  };
}

async function phoneVideo({ ffmpeg, ffprobe }, dir, size) {
  const clip = join(dir, 'clip.mov');
  await run(ffmpeg, [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30:duration=10'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=10:sample_rate=48000'],
    // Noise keeps the bitrate up (a phone's picture is never as flat as a test pattern).
    ...['-vf', 'noise=alls=20:allf=t', '-c:v', 'libx264', '-preset', 'ultrafast', '-x264-params', 'cabac=1:8x8dct=1'],
    ...['-profile:v', 'high', '-level:v', '4.2', '-pix_fmt', 'yuv420p', '-b:v', '45M', '-maxrate', '45M', '-bufsize', '45M'],
    ...['-c:a', 'aac', '-ac', '2', '-shortest', clip],
  ]);
  const copies = Math.max(1, Math.round(size / statSync(clip).size));
  const list = join(dir, 'clips.txt');
  writeFileSync(list, Array.from({ length: copies }, () => "file 'clip.mov'\n").join(''));
  const video = join(dir, 'phone-1gb.mov');
  await run(ffmpeg, [
    ...['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy'],
    ...['-metadata', 'location=+48.8584+002.2945/', '-metadata:s:v:0', 'rotate=90', video],
  ]);
  const probe = JSON.parse((await run(ffprobe, ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', video])).stdout);
  return { path: video, bytes: statSync(video).size, seconds: Number(probe.format.duration), streams: probe.streams };
}

async function main() {
  const settings = settingsFromArgs();
  checkBuilt(ALL_IN_ONE_BUILT);
  const startedAt = new Date();
  const stamp = stampOf(startedAt);
  const tempDir = makeTempDir('portal-bench-upload-e2e-');
  const stopWatchdog = startWatchdog(1800 + (settings.swap ? settings.swapTimeoutS : 0));
  const machine = machineInfo();
  console.log(describeMachine('upload, end to end', machine));

  const { ffmpeg, platform } = await mediaTools();
  const { ffprobe } = platform.locateFfmpeg();
  process.stdout.write(`  making a phone-like video of about ${mb(settings.size)}...`);
  const video = await phoneVideo({ ffmpeg, ffprobe }, tempDir, settings.size);
  const picture = video.streams.find((s) => s.codec_type === 'video');
  console.log(
    ` ${(video.bytes / 1e6).toFixed(1)} MB, ${video.seconds.toFixed(1)} s, ${picture.codec_name} ${picture.profile} level ${picture.level} ${picture.width}x${picture.height}`,
  );

  const portal = await startAllInOne(tempDir, { MEDIA_TRANSCODE_POLICY: settings.policy });
  const { cookie } = await registerParticipant(portal.url, 'e2e_informant', await noisyJpeg(320, 320));
  const memory = memorySampler(portal.entry.child.pid);
  const load = { start: loadavg() };

  memory.phase('upload');
  const chunkSize = webChunkSize(video.bytes);
  const metadata = { title: 'The long walk', notes: '', location: '', filename: 'phone-1gb.mov', filetype: 'video/quicktime' };
  const uploaded = await orFail(
    tusUpload({ endpoint: `${portal.url}/api/evidence/uploads`, input: video.path, headers: { cookie }, metadata, chunkSize }),
  );
  const uploadDone = performance.now();
  const item = JSON.parse(uploaded.body);
  if (uploaded.status !== 200 || item.media_type !== 3)
    throw new Error(`the upload answered ${uploaded.status}: ${uploaded.body.slice(0, 300)}`);
  console.log(
    `  uploaded in ${(uploaded.ms / 1000).toFixed(1)} s (${(video.bytes / 1e6 / (uploaded.ms / 1000)).toFixed(1)} MB/s, ${mb(chunkSize)} chunks)`,
  );
  load.uploaded = loadavg();

  memory.phase('to-ready');
  const current = async () => {
    const response = await fetch(`${portal.url}/api/evidence/item/${item.id}`, { headers: { cookie } });
    return response.json();
  };
  const poll = async (done, timeoutS, what) => {
    const deadline = performance.now() + timeoutS * 1000;
    for (;;) {
      const now = await current();
      if (now.media_status === 'failed') throw new Error(`the video failed: ${now.media_error}`);
      if (done(now)) return { item: now, at: performance.now() };
      if (performance.now() > deadline) return { item: now, at: null, what };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const ready = await poll((now) => now.media_status === 'ready', 1200, 'ready');
  if (ready.at === null) throw new Error('the video was not ready within 20 minutes of its upload');
  const toReadyS = (ready.at - uploadDone) / 1000;
  load.ready = loadavg();
  console.log(`  ready ${toReadyS.toFixed(1)} s after the upload completed (${ready.item.aws_url})`);

  let swap = null;
  if (settings.swap && settings.policy === 'playable-first') {
    memory.phase('to-720p');
    const final = await poll(
      (now) => now.media_status === 'ready' && !String(now.aws_url).includes('-remuxed'),
      settings.swapTimeoutS,
      '720p',
    );
    load.swapped = loadavg();
    swap =
      final.at === null ? { reached: false, waitedS: settings.swapTimeoutS } : { reached: true, afterReadyS: (final.at - ready.at) / 1000 };
    console.log(
      swap.reached
        ? `  the 720p copy replaced it ${swap.afterReadyS.toFixed(1)} s later (${final.item.aws_url})`
        : `  no 720p copy within ${settings.swapTimeoutS} s`,
    );
  }
  const { phases, portalHighWaterMark } = memory.stop();
  stopWatchdog();

  console.log('\n  memory (RSS, sampled every 100 ms; processes started by the portal: ffmpeg, ffprobe):');
  for (const [name, figures] of Object.entries(phases)) {
    if (name === 'start') continue;
    console.log(
      `    ${name.padEnd(8)} portal peak ${mb(figures.portalPeak)}, largest child ${mb(figures.childPeak)}${figures.childName ? ` (${figures.childName})` : ''}, portal + children ${mb(figures.totalPeak)}`,
    );
  }
  console.log(`    portal's high-water mark (VmHWM, whole run): ${mb(portalHighWaterMark ?? 0)}`);
  console.log(
    `  load average (1, 5, 15 min): start ${load.start.map((v) => v.toFixed(1)).join(' ')}, at ready ${load.ready.map((v) => v.toFixed(1)).join(' ')}${load.swapped ? `, at the swap ${load.swapped.map((v) => v.toFixed(1)).join(' ')}` : ''}`,
  );

  const file = saveResult('upload-e2e', stamp, {
    bench: 'upload-e2e',
    startedAt: startedAt.toISOString(),
    machine,
    settings,
    video: { bytes: video.bytes, seconds: video.seconds, codec: `${picture.codec_name} ${picture.profile} ${picture.level}` },
    upload: { ms: uploaded.ms, chunkSize },
    toReadyS,
    firstCopy: ready.item.aws_url,
    swap,
    memory: { phases, portalHighWaterMark },
    loadAverage: load,
  });
  console.log(`\n  results: ${relative(ROOT, file)}`);
}

await runBench('upload end-to-end', main);
