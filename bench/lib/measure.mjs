// Measuring on Linux without extra tools: CPU time and memory of processes from /proc, the whole
// machine's busy time, latency percentiles, and autocannon (its programmatic API) in this process.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { failure, onStop } from './runner.mjs';

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds used so far by a process (Linux /proc); null where that is not available. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Resident memory of a process in bytes (VmRSS from /proc); null where that is not available. */
export function rssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine so far (Linux /proc/stat); null elsewhere. */
export function machineBusySeconds() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy
    const busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + (fields[7] ?? 0);
    return busy / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/**
 * CPU used by named processes (and by this one, as "bench") between start() and stop(), as a
 * share of one core, plus whatever else kept the machine busy meanwhile ("other").
 */
export function cpuMeter(processes) {
  const before = processes.map(({ child }) => cpuSeconds(child.pid));
  const benchBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const started = process.hrtime.bigint();
  return {
    stop() {
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      const benchUsed = process.cpuUsage(benchBefore);
      const cpu = {};
      processes.forEach(({ name, child }, i) => {
        const after = cpuSeconds(child.pid);
        cpu[name] = after === null || before[i] === null ? null : (after - before[i]) / wall;
      });
      cpu.bench = (benchUsed.user + benchUsed.system) / 1e6 / wall;
      const machineAfter = machineBusySeconds();
      const ours = Object.values(cpu).reduce((sum, share) => sum + (share ?? 0), 0);
      const other = machineBefore === null || machineAfter === null ? null : Math.max(0, (machineAfter - machineBefore) / wall - ours);
      return { wall, cpu, otherCpu: other };
    },
  };
}

/** Samples the resident memory of processes every intervalMs; stop() answers start, peak, end per name. */
export function rssSampler(processes, intervalMs = 100) {
  const stats = Object.fromEntries(
    processes.map(({ name, child }) => {
      const now = rssBytes(child.pid);
      return [name, { start: now, peak: now, end: now, samples: [] }];
    }),
  );
  const started = Date.now();
  const sample = () => {
    for (const { name, child } of processes) {
      const now = rssBytes(child.pid);
      if (now === null) continue;
      const entry = stats[name];
      entry.peak = Math.max(entry.peak ?? 0, now);
      entry.end = now;
      entry.samples.push([Date.now() - started, now]);
    }
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return stats;
    },
  };
}

/**
 * CPU of the whole machine between this call and the call of the function it answers (from
 * /proc/stat), and the part of it that was not the measured process (`pid`, with its threads and
 * the children it waited for, e.g. ffmpeg): `other` is what the rest of the machine did
 * meanwhile, as a share of all cores.
 */
export function machineCpu(pid) {
  const clockTicks = () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    const total = fields.reduce((sum, value) => sum + value, 0);
    return { idle, total };
  };
  const processTicks = () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      return fields[11] + fields[12] + fields[13] + fields[14]; // utime stime cutime cstime
    } catch {
      return 0;
    }
  };
  const before = clockTicks();
  const ownBefore = processTicks();
  return () => {
    const after = clockTicks();
    const total = after.total - before.total;
    if (total <= 0) return { busy: 0, other: 0, measured: 0 };
    const busyTicks = total - (after.idle - before.idle);
    const own = Math.max(0, processTicks() - ownBefore);
    return { busy: busyTicks / total, measured: own / total, other: Math.max(0, busyTicks - own) / total };
  };
}

/** The median of numbers (the mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The p-th percentile (0-100) of numbers, nearest rank; null for none. */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** One autocannon run (stopped early if the bench stops). */
export function cannon(options) {
  return new Promise((resolve, reject) => {
    let instance = null;
    const remove = onStop(() => instance?.stop());
    instance = autocannon(options, (error, result) => {
      remove();
      if (error) reject(error);
      else resolve(result);
    });
  });
}

/** The figures of an autocannon result the benches keep. */
export function cannonFigures(result) {
  return {
    rps: result.requests.mean,
    rpsStddev: result.requests.stddev,
    requests: result.requests.total,
    latency: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** CPU time per answered request (µs) per process, from a cpuMeter's figures. */
export function cpuPerRequest({ cpu, wall }, answered) {
  return Object.fromEntries(
    Object.entries(cpu).map(([name, share]) => [name, share === null ? null : (share * wall * 1e6) / (answered || 1)]),
  );
}

export function mb(bytes) {
  return bytes / 1e6;
}

/**
 * One autocannon run against a target ({ url, headers, method? }), with the CPU each process
 * used meanwhile and the CPU time per answered request.
 */
export async function measureTarget(target, settings, seconds, processes) {
  const meter = cpuMeter(processes);
  const result = await Promise.race([
    cannon({
      url: target.url,
      method: target.method ?? 'GET',
      headers: target.headers,
      connections: settings.connections,
      duration: seconds,
      timeout: 10,
    }),
    failure,
  ]);
  const used = meter.stop();
  const figures = cannonFigures(result);
  // CPU time per answered request (µs): what tuning a process moves, whatever the machine's load.
  return { ...figures, cpu: used.cpu, cpuPerRequestUs: cpuPerRequest(used, figures.requests), otherCpu: used.otherCpu };
}

/**
 * A warm-up per target, then settings.rounds rounds of settings.duration seconds per target, the
 * order alternating each round so that neither target always runs on the warmer (or noisier)
 * side. Answers the runs per target key.
 */
export async function measureRounds(targets, settings, processes) {
  for (const target of targets) {
    if (settings.warmup > 0) {
      process.stdout.write(`  warm-up: ${target.title}...`);
      const warm = await measureTarget(target, settings, settings.warmup, processes);
      console.log(` ${Math.round(warm.rps)} req/s`);
    }
  }
  const runs = Object.fromEntries(targets.map((t) => [t.key, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      process.stdout.write(`  round ${round + 1}/${settings.rounds}: ${target.title}...`);
      const run = await measureTarget(target, settings, settings.duration, processes);
      runs[target.key].push(run);
      console.log(` ${Math.round(run.rps)} req/s`);
    }
  }
  return runs;
}

/** The mean of the rounds of one target (sums for counts, the worst for the maximum latency). */
export function averageRuns(runs) {
  const mean = (pick) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  const sum = (pick) => runs.reduce((total, run) => total + pick(run), 0);
  const cpuNames = Object.keys(runs[0].cpu);
  return {
    rps: mean((r) => r.rps),
    rpsRounds: runs.map((r) => r.rps),
    requests: sum((r) => r.requests),
    latency: {
      mean: mean((r) => r.latency.mean),
      p50: mean((r) => r.latency.p50),
      p90: mean((r) => r.latency.p90),
      p99: mean((r) => r.latency.p99),
      max: Math.max(...runs.map((r) => r.latency.max)),
    },
    ok2xx: sum((r) => r.ok2xx),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    cpu: Object.fromEntries(cpuNames.map((name) => [name, runs.some((r) => r.cpu[name] === null) ? null : mean((r) => r.cpu[name])])),
    otherCpu: runs.some((r) => r.otherCpu === null) ? null : mean((r) => r.otherCpu),
    cpuPerRequestUs: Object.fromEntries(
      cpuNames.map((name) => [name, runs.some((r) => r.cpuPerRequestUs[name] === null) ? null : mean((r) => r.cpuPerRequestUs[name])]),
    ),
  };
}

/** A CPU share as a percentage cell ("-" when unknown). */
export function percentCell(share) {
  return share === null || share === undefined ? '-' : `${Math.round(share * 100)}%`;
}

/** The columns every autocannon table shows, for one averaged target. */
export function cannonCells(r, cpuNames) {
  return [
    Math.round(r.rps).toString(),
    r.latency.p50.toFixed(1),
    r.latency.p99.toFixed(1),
    String(r.errors + r.timeouts),
    String(r.non2xx),
    ...cpuNames.map((n) => percentCell(r.cpu[n])),
    percentCell(r.otherCpu),
  ];
}
export const CANNON_HEADER = ['req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx'];

/** The notes every autocannon comparison prints under its table. */
export function cannonWarnings(targets, results) {
  const disturbed = targets.filter((t) => (results[t.key].otherCpu ?? 0) > 0.25);
  if (disturbed.length > 0) {
    console.log(
      `  NOTE: other work used over 25% of a core during ${disturbed.map((t) => t.title).join(', ')}: the machine was not quiet; repeat the run (--rounds 3)`,
    );
  }
  const bad = targets.filter((t) => results[t.key].errors + results[t.key].timeouts + results[t.key].non2xx > 0);
  if (bad.length > 0)
    console.log(`  WARNING: errors or non-2xx answers for ${bad.map((t) => t.title).join(', ')}: the figures are not comparable`);
}
