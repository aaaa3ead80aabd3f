// bench/web: how heavy and how fast the web app is on a phone, against the smallest React page
// built and measured the same way in the same run (see bench/web/README.md).
//   1. JavaScript over the wire: /home and /archive loaded in Chromium (playwright-core, phone
//      viewport, empty cache); every JavaScript response's transferred body bytes are summed.
//   2. Lighthouse (npm's lighthouse, its default mobile emulation and simulated throttling) on
//      the same pages: performance score and its metrics, median of --runs runs.
// The app is served by the all-in-one portal from the build (the real gateway, a temporary
// DATA_DIR); the baseline (bench/web/baseline, React rendering a heading) by a bare node:http
// server that sends the same gzip the gateway sends.
//   3. With --compare-web or --compare-tree, another build measured the same way in the same run
//      (rounds interleaved), and each figure's ratio to it.
// Usage: npm run build && npm run bench:web [-- --runs 3 --label text]
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { median } from '../lib/measure.mjs';
import { gitDescribe, machineSummary, RESULTS_DIR, ROOT, saveResult, stampOf } from '../lib/runner.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    pages: { type: 'string', default: '/home,/archive' },
    label: { type: 'string', default: '' },
    'no-lighthouse': { type: 'boolean', default: false },
    reports: { type: 'boolean', default: false },
    'compare-web': { type: 'string', default: '' },
    'compare-tree': { type: 'string', default: '' },
    categories: { type: 'string', default: 'performance' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(
    'npm run bench:web -- [--runs 3 (Lighthouse runs per page)] [--pages /home,/archive] [--no-lighthouse] [--reports (also write the last Lighthouse report of each page, JSON)] [--label text] [--compare-web <another build of web/dist> (its pages measured in the same run, rounds interleaved)] [--compare-tree <another built checkout> (its own portal and web app, e.g. an older commit built in a git worktree, measured the same way)] [--categories performance (Lighthouse categories, comma-separated, or all: performance,accessibility,best-practices,seo)]',
  );
  process.exit(0);
}
const runs = Math.min(9, Math.max(1, Number(values.runs)));
const pages = values.pages.split(',').filter(Boolean);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROME_FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const TARGETS = { jsKb: 150, score: 95 };
const ALL_CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const categories = values.categories === 'all' ? ALL_CATEGORIES : values.categories.split(',').filter(Boolean);
for (const category of categories) {
  if (!ALL_CATEGORIES.includes(category)) {
    console.error(`--categories: ${category} is not one of ${ALL_CATEGORIES.join(', ')} (or all).`);
    process.exit(1);
  }
}
if (!categories.includes('performance')) categories.unshift('performance');
if (values['compare-web'] && values['compare-tree']) {
  console.error('--compare-web and --compare-tree: one or the other, not both.');
  process.exit(1);
}

for (const file of ['web/dist/index.html', 'packages/all-in-one/dist/main.js']) {
  if (!existsSync(join(ROOT, file))) {
    console.error(`${file} is missing: build first (npm run build).`);
    process.exit(1);
  }
}
if (!existsSync(CHROMIUM)) {
  console.error(`Chromium not found at ${CHROMIUM}: sudo apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH.`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'portal-bench-web-'));
const stamp = stampOf(new Date());
const loadAtStart = loadavg();
if (values.reports) mkdirSync(RESULTS_DIR, { recursive: true });
const cleanups = [];
// 15 minutes, or more when many Lighthouse runs are asked for (one can take 40 s on a busy machine).
const lighthouseRuns = values['no-lighthouse'] ? 0 : runs * (1 + pages.length * (values['compare-web'] || values['compare-tree'] ? 2 : 1));
const watchdogMinutes = Math.max(15, Math.ceil(5 + (lighthouseRuns * 40) / 60));
const watchdog = setTimeout(() => {
  console.error(`bench:web: watchdog (${watchdogMinutes} min) expired, stopping`);
  process.exit(2);
}, watchdogMinutes * 60_000);
watchdog.unref();

try {
  // --- the baseline: the smallest React page, built by the app's Vite ------------------------
  const { build } = await import('vite');
  const baselineDist = join(dir, 'baseline');
  await build({
    root: join(ROOT, 'bench/web/baseline'),
    configFile: false,
    logLevel: 'error',
    build: { outDir: baselineDist, emptyOutDir: true, target: 'es2022' },
  });
  const baseline = await serveBare(baselineDist);
  cleanups.push(() => new Promise((resolve) => baseline.server.close(resolve)));

  // --- the app: the all-in-one portal from the build --------------------------------------------
  const portal = await startPortal(join(dir, 'data'));
  cleanups.push(portal.stop);
  // --compare-web: another build of the web app (e.g. main's, to show before and after in one
  // run), served by a second all-in-one portal of this build: only the web app differs.
  // --compare-tree: another built checkout (e.g. an older commit in a git worktree, built there),
  // its own all-in-one portal serving its own web app: the product as it was, gateway included.
  const compareDist = values['compare-web'] ? resolve(values['compare-web']) : '';
  if (compareDist && !existsSync(join(compareDist, 'index.html'))) throw new Error(`--compare-web: ${compareDist} has no index.html`);
  const compareTree = values['compare-tree'] ? resolve(values['compare-tree']) : '';
  if (compareTree) {
    for (const file of ['web/dist/index.html', 'packages/all-in-one/dist/main.js']) {
      if (!existsSync(join(compareTree, file)))
        throw new Error(`--compare-tree: ${join(compareTree, file)} is missing (build that tree first)`);
    }
  }
  const comparePortal = compareDist
    ? await startPortal(join(dir, 'compare-data'), { WEB_DIST: compareDist })
    : compareTree
      ? await startPortal(join(dir, 'compare-data'), { WEB_DIST: join(compareTree, 'web/dist') }, compareTree)
      : null;
  if (comparePortal) cleanups.push(comparePortal.stop);
  const compareCommit = compareTree ? gitDescribe(['web/', 'services/', 'packages/'], compareTree) : null;

  const targets = [
    { key: 'baseline', title: 'baseline: minimal React page, bare node:http + gzip', url: `${baseline.url}/` },
    ...pages.map((path) => ({ key: path, title: `app ${path}`, url: `${portal.url}${path}` })),
    ...(comparePortal
      ? pages.map((path) => ({ key: `compare ${path}`, title: `compared build ${path}`, url: `${comparePortal.url}${path}` }))
      : []),
  ];

  // --- 1. JavaScript transferred ---------------------------------------------------------------
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROME_FLAGS });
  cleanups.push(() => browser.close());
  const transfer = {};
  for (const target of targets) transfer[target.key] = await javascriptOf(browser, target.url);
  await browser.close();

  console.log('\nJavaScript loaded by each page (empty cache, phone viewport, until the network is idle):');
  console.log(`  ${'page'.padEnd(52)} files      gzip   over the wire (encodings)   uncompressed`);
  for (const target of targets) {
    const t = transfer[target.key];
    console.log(
      `  ${target.title.padEnd(52)} ${String(t.files.length).padStart(5)}  ${kb(t.gzipBytes).padStart(8)}  ${kb(t.transferBytes).padStart(8)} (${t.encodings.join(', ') || 'none'})`.padEnd(
        100,
      ) + kb(t.decodedBytes).padStart(10),
    );
  }
  for (const path of pages) {
    const t = transfer[path];
    const met = t.gzipBytes / 1024 <= TARGETS.jsKb;
    console.log(
      `  ${path}: ${kb(t.gzipBytes)} gzipped = ${(t.gzipBytes / transfer.baseline.gzipBytes).toFixed(2)}x the baseline's ${kb(transfer.baseline.gzipBytes)}   target <= ${TARGETS.jsKb} KB: ${met ? 'met' : 'NOT met'}`,
    );
    for (const file of [...t.files].sort((a, b) => b.gzipBytes - a.gzipBytes).slice(0, 5)) {
      console.log(`      ${kb(file.gzipBytes).padStart(8)}  ${file.path}`);
    }
  }

  // --- 2. Lighthouse -----------------------------------------------------------------------------
  const lighthouseResults = {};
  if (!values['no-lighthouse']) {
    const { default: lighthouse } = await import('lighthouse');
    const chromeLauncher = await import('chrome-launcher');
    const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: CHROME_FLAGS, logLevel: 'error' });
    cleanups.push(async () => {
      try {
        await chrome.kill();
      } catch {
        // already gone
      }
    });
    console.log(
      `\nLighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version}: mobile emulation, simulated throttling, ${runs} run(s) per page, rounds interleaved, categories ${categories.join(', ')}`,
    );
    const perRun = Object.fromEntries(targets.map((t) => [t.key, []]));
    for (let run = 1; run <= runs; run++) {
      for (const target of run % 2 ? targets : [...targets].reverse()) {
        // Lighthouse's trace recording fails now and then on a busy machine (NO_NAVSTART,
        // NO_FCP): such a run is repeated, up to twice.
        let outcome;
        for (let attempt = 1; ; attempt++) {
          outcome = await lighthouse(target.url, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: categories });
          if (!outcome.lhr.runtimeError || attempt === 3) break;
          console.log(`\n  Lighthouse on ${target.url}: ${outcome.lhr.runtimeError.code}, running it again`);
        }
        const lhr = outcome.lhr;
        if (values.reports && run === runs) {
          const name = target.key === 'baseline' ? 'baseline' : target.key.replace(/\W+/g, '');
          writeFileSync(join(RESULTS_DIR, `web-lighthouse-${name}-${stamp}.json`), outcome.report);
        }
        if (lhr.runtimeError) throw new Error(`Lighthouse on ${target.url}: ${lhr.runtimeError.message}`);
        perRun[target.key].push({
          score: Math.round(lhr.categories.performance.score * 100),
          categories: Object.fromEntries(categories.map((category) => [category, Math.round(lhr.categories[category].score * 100)])),
          // What the other categories hold against the page: the audits that did not pass.
          failedAudits: categories
            .filter((category) => category !== 'performance')
            .flatMap((category) =>
              lhr.categories[category].auditRefs
                .filter((ref) => ref.weight > 0 && lhr.audits[ref.id].score !== null && lhr.audits[ref.id].score < 1)
                .map((ref) => `${category}: ${ref.id}`),
            ),
          fcpMs: lhr.audits['first-contentful-paint'].numericValue,
          lcpMs: lhr.audits['largest-contentful-paint'].numericValue,
          tbtMs: lhr.audits['total-blocking-time'].numericValue,
          cls: lhr.audits['cumulative-layout-shift'].numericValue,
          speedIndexMs: lhr.audits['speed-index'].numericValue,
          interactiveMs: lhr.audits.interactive?.numericValue ?? null,
          benchmarkIndex: lhr.environment.benchmarkIndex,
          warnings: lhr.runWarnings,
          opportunities: Object.values(lhr.audits)
            .filter((audit) => audit.details?.type === 'opportunity' && (audit.details.overallSavingsMs ?? 0) > 0)
            .map((audit) => ({ id: audit.id, savingsMs: Math.round(audit.details.overallSavingsMs) })),
        });
        process.stdout.write('.');
      }
    }
    console.log('');
    console.log('  page                                                  score   FCP ms   LCP ms   TBT ms    CLS   SI ms   (medians)');
    for (const target of targets) {
      const r = perRun[target.key];
      const m = (field) => median(r.map((x) => x[field]));
      lighthouseResults[target.key] = {
        score: m('score'),
        scores: r.map((x) => x.score),
        fcpMs: m('fcpMs'),
        lcpMs: m('lcpMs'),
        tbtMs: m('tbtMs'),
        cls: m('cls'),
        speedIndexMs: m('speedIndexMs'),
        benchmarkIndex: m('benchmarkIndex'),
        categories: Object.fromEntries(categories.map((category) => [category, median(r.map((x) => x.categories[category]))])),
        categoryRuns: Object.fromEntries(categories.map((category) => [category, r.map((x) => x.categories[category])])),
        failedAudits: [...new Set(r.flatMap((x) => x.failedAudits))],
        runs: r,
      };
      const l = lighthouseResults[target.key];
      console.log(
        `  ${target.title.padEnd(52)} ${String(l.score).padStart(5)}  ${ms(l.fcpMs)}  ${ms(l.lcpMs)}  ${ms(l.tbtMs)}  ${l.cls.toFixed(3).padStart(5)}  ${ms(l.speedIndexMs)}   (scores ${l.scores.join(', ')})`,
      );
    }
    for (const path of pages) {
      const l = lighthouseResults[path];
      console.log(
        `  ${path}: score ${l.score} (baseline ${lighthouseResults.baseline.score})   target >= ${TARGETS.score}: ${l.score >= TARGETS.score ? 'met' : 'NOT met'}`,
      );
      const opportunities = l.runs.at(-1).opportunities;
      if (opportunities.length)
        console.log(`      Lighthouse suggests: ${opportunities.map((o) => `${o.id} (${o.savingsMs} ms)`).join(', ')}`);
      const compared = lighthouseResults[`compare ${path}`];
      if (compared)
        console.log(
          `      against the compared build: score ${l.score} vs ${compared.score}, LCP ${Math.round(l.lcpMs)} vs ${Math.round(compared.lcpMs)} ms, TBT ${Math.round(l.tbtMs)} vs ${Math.round(compared.tbtMs)} ms`,
        );
    }
    if (categories.length > 1) {
      console.log(
        `\n  Lighthouse categories (medians; the runs in brackets)${comparePortal ? ', and this build / the compared build' : ''}:`,
      );
      console.log(`  ${'page'.padEnd(40)} ${categories.map((category) => category.padStart(26)).join('')}`);
      for (const target of targets) {
        const l = lighthouseResults[target.key];
        console.log(
          `  ${target.title.slice(0, 40).padEnd(40)} ${categories.map((category) => `${l.categories[category]} (${l.categoryRuns[category].join(',')})`.padStart(26)).join('')}`,
        );
      }
      if (comparePortal) {
        for (const path of pages) {
          const l = lighthouseResults[path];
          const c = lighthouseResults[`compare ${path}`];
          console.log(
            `  ${`${path}: this / compared`.padEnd(40)} ${categories.map((category) => `${(l.categories[category] / c.categories[category]).toFixed(2)}x`.padStart(26)).join('')}`,
          );
        }
      }
      for (const target of targets) {
        const failed = lighthouseResults[target.key].failedAudits;
        if (failed.length) console.log(`  ${target.title}: audits not passed: ${failed.join(', ')}`);
      }
    }
    const warnings = [...new Set(Object.values(perRun).flatMap((r) => r.flatMap((x) => x.warnings)))];
    for (const warning of warnings) console.log(`  Lighthouse warning: ${warning}`);
    console.log(
      `  Lighthouse's CPU benchmark index on this machine: ${lighthouseResults.baseline.benchmarkIndex} (it scales the simulated phone's CPU from this)`,
    );
  }

  const file = saveResult('web', stampOf(new Date()), {
    bench: 'web',
    label: values.label,
    date: new Date().toISOString(),
    commit: gitDescribe(['web/', 'services/', 'packages/']),
    machine: { ...machineSummary(), chromium: CHROMIUM, loadAverageAtStart: round2(loadAtStart), loadAverageAtEnd: round2(loadavg()) },
    settings: {
      runs,
      pages,
      categories,
      chromeFlags: CHROME_FLAGS,
      compareWeb: compareDist || null,
      compareTree: compareTree || null,
      compareCommit,
    },
    targets: TARGETS,
    javascript: transfer,
    lighthouse: lighthouseResults,
  });
  console.log(`\nload average (1, 5, 15 min): ${round2(loadAtStart).join(', ')} at the start, ${round2(loadavg()).join(', ')} at the end`);
  console.log(`results: ${file}`);
} finally {
  for (const cleanup of cleanups.reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}

/** Loads a page as a phone with an empty cache and sums the JavaScript it fetched. */
async function javascriptOf(browser, url) {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Mobile Safari/537.36',
  });
  const page = await context.newPage();
  const seen = [];
  page.on('requestfinished', (request) => {
    seen.push(
      (async () => {
        const response = await request.response();
        if (!response) return null;
        const type = response.headers()['content-type'] ?? '';
        if (request.resourceType() !== 'script' && !type.includes('javascript')) return null;
        const sizes = await request.sizes();
        const body = await response.body();
        return {
          path: new URL(request.url()).pathname,
          status: response.status(),
          transferBytes: sizes.responseBodySize,
          decodedBytes: body.length,
          // What the file weighs gzipped at the build's level (-9): the target's measure, whatever
          // encoding this browser happened to ask for (Chromium asks for br too).
          gzipBytes: gzipSync(body, { level: 9 }).length,
          encoding: response.headers()['content-encoding'] ?? null,
          cacheControl: response.headers()['cache-control'] ?? null,
        };
      })(),
    );
  });
  await page.goto(url, { waitUntil: 'networkidle' });
  await page.waitForTimeout(500);
  const files = (await Promise.all(seen)).filter(Boolean);
  await context.close();
  return {
    files,
    transferBytes: files.reduce((sum, f) => sum + f.transferBytes, 0),
    gzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0),
    decodedBytes: files.reduce((sum, f) => sum + f.decodedBytes, 0),
    encodings: [...new Set(files.map((f) => f.encoding ?? 'identity'))],
  };
}

/** The baseline's server: node:http, files from memory, gzip when the browser accepts it. */
async function serveBare(root) {
  const files = new Map();
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const body = readFileSync(path);
        files.set(`/${normalize(path.slice(root.length + 1))}`, { body, gzip: gzipSync(body, { level: 9 }) });
      }
    }
  };
  walk(root);
  const types = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.svg': 'image/svg+xml',
  };
  const server = createServer((request, response) => {
    const path = new URL(request.url, 'http://x').pathname;
    const file = files.get(path === '/' ? '/index.html' : path);
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    response.writeHead(200, {
      'content-type': types[extname(path === '/' ? 'index.html' : path)] ?? 'application/octet-stream',
      'cache-control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    response.end(gzip ? file.gzip : file.body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

async function freePort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The all-in-one portal from the build of `tree` (this checkout unless another is given), on
 * 127.0.0.1, with its own data; stopped with SIGTERM.
 */
async function startPortal(dataDir, extraEnv = {}, tree = ROOT) {
  const port = await freePort();
  const logFile = join(dir, 'portal.log');
  const child = fork(join(tree, 'packages/all-in-one/dist/main.js'), [], {
    cwd: tree,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      METRICS_PORT: String(await freePort()),
      METRICS_HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
      ...extraEnv,
    },
    stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a'), 'ipc'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the portal stopped at start; its log:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`the portal did not get ready in 60 s; its log:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function round2(values) {
  return values.map((value) => Math.round(value * 100) / 100);
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function ms(value) {
  return String(Math.round(value)).padStart(7);
}
