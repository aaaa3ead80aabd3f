#!/usr/bin/env node
// Prints where a V8 CPU profile (node --cpu-prof) spent its time: self time per function, and
// self time summed per package (node_modules/<name>, node: internals, our own dist/ code).
//
//   node bench/gateway/profile-top.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Self time (ms) per function and per package of one .cpuprofile file. `windows`: only the samples
 * taken within these [from, to] spans of the monotonic clock in µs (process.hrtime.bigint() / 1000
 * in any process of the machine: V8 stamps its samples with the same clock), e.g. the measured
 * requests without the start-up.
 */
export function summarizeProfile(file, { windows } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map();
  const { samples = [], timeDeltas = [] } = profile;
  let at = profile.startTime ?? 0;
  for (let i = 0; i < samples.length; i += 1) {
    at += timeDeltas[i] ?? 0;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    const delta = Math.max(timeDeltas[i] ?? 0, 0) / 1000;
    selfMs.set(samples[i], (selfMs.get(samples[i]) ?? 0) + delta);
  }
  const byFunction = new Map();
  const byPackage = new Map();
  let total = 0;
  for (const [id, ms] of selfMs) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    total += ms;
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where ? `${where}:${frame.lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    const pkg = packageOf(frame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
  }
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms, share: total ? ms / total : 0 }));
  return { totalMs: total, functions: sorted(byFunction), packages: sorted(byPackage) };
}

function shortUrl(url) {
  if (!url) return '';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.search(/(services|packages)\/[^/]+\/dist\//);
  if (dist >= 0) return url.slice(dist);
  return url.replace(/^file:\/\//, '');
}

function packageOf(frame) {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(idle)' || functionName === '(program)') return functionName;
    return '(native / V8)';
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url.slice(url.lastIndexOf('node_modules/')));
  if (url.includes('node_modules/') && match) return match[1];
  const own = /(services|packages)\/([^/]+)\/dist\//.exec(url);
  return own ? `(ours) ${own[1]}/${own[2]}` : url;
}

/** A printable table of the top entries (busy time only: idle and program are left out of shares). */
export function formatProfile(summary, top = 20) {
  const busy = summary.functions.filter((f) => f.name !== '(idle)' && f.name !== '(program)');
  const busyMs = busy.reduce((sum, f) => sum + f.ms, 0);
  const idle = summary.functions.find((f) => f.name === '(idle)')?.ms ?? 0;
  const lines = [
    `  sampled ${(summary.totalMs / 1000).toFixed(1)} s, idle ${(idle / 1000).toFixed(1)} s, busy (without idle/program) ${(busyMs / 1000).toFixed(1)} s`,
    '  self time by package:',
  ];
  for (const p of summary.packages.filter((p) => p.name !== '(idle)' && p.name !== '(program)').slice(0, 14)) {
    lines.push(`    ${pct(p.ms / busyMs)}  ${p.name}`);
  }
  lines.push('  self time by function:');
  for (const f of busy.slice(0, top)) lines.push(`    ${pct(f.ms / busyMs)}  ${f.name}`);
  return lines.join('\n');
}

function pct(share) {
  return `${(share * 100).toFixed(1).padStart(5)}%`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/gateway/profile-top.mjs <file.cpuprofile> [top=25]');
    process.exit(2);
  }
  console.log(file);
  console.log(formatProfile(summarizeProfile(file), Number(top) || 25));
}
