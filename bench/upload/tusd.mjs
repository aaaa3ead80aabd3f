// tusd, the reference tus server (Go), as the upload bench's second baseline: the server people
// would pick for resumable uploads. The bench never downloads it: it is found where `go install`
// puts it, or at TUSD_PATH, and when it is nowhere the bench says how to install it and goes on
// without that baseline.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort, waitFor } from '../lib/http.mjs';
import { HOST, UsageError, orFail, startProgram } from '../lib/runner.mjs';

export const TUSD_VERSION = 'v2.8.0';
export const TUSD_INSTALL = `go install github.com/tus/tusd/v2/cmd/tusd@${TUSD_VERSION}`;

function goBinary() {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'go'))
    .find((path) => existsSync(path));
  return onPath ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find((path) => existsSync(path)) ?? null;
}

/** Where `go install` puts binaries: $GOBIN, else $(go env GOPATH)/bin, else ~/go/bin. */
function goInstallDirs() {
  const dirs = [];
  if (process.env.GOBIN) dirs.push(process.env.GOBIN);
  const go = goBinary();
  if (go) {
    try {
      const [gobin, gopath] = execFileSync(go, ['env', 'GOBIN', 'GOPATH'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10_000,
      }).split('\n');
      if (gobin?.trim()) dirs.push(gobin.trim());
      for (const path of (gopath ?? '').trim().split(delimiter).filter(Boolean)) dirs.push(join(path, 'bin'));
    } catch {
      // go is there but cannot tell: the usual place below
    }
  }
  dirs.push(join(homedir(), 'go', 'bin'));
  return dirs;
}

/**
 * The tusd binary: TUSD_PATH (which must exist), else where `go install` put it, else on PATH.
 * Answers { path, version } or null.
 */
export function locateTusd() {
  const fromEnv = process.env.TUSD_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new UsageError(`TUSD_PATH=${fromEnv} does not exist. Install tusd with: ${TUSD_INSTALL}`);
    return { path: fromEnv, version: versionOf(fromEnv) };
  }
  const candidates = [...goInstallDirs(), ...(process.env.PATH ?? '').split(delimiter)].map((dir) => join(dir, 'tusd'));
  const path = candidates.find((candidate) => existsSync(candidate));
  return path ? { path, version: versionOf(path) } : null;
}

function versionOf(path) {
  try {
    const text = execFileSync(path, ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
    return /Version:\s*(\S+)/.exec(text)?.[1] ?? text.split('\n')[0].trim();
  } catch (error) {
    throw new UsageError(`${path} is not a working tusd (${error.message}). Install it with: ${TUSD_INSTALL}`);
  }
}

/**
 * tusd on a loopback port with its file store in a folder of the bench's temporary folder, as it
 * runs out of the box otherwise (no hooks; it writes each PATCH to the file as it streams and,
 * unlike the portal and the bare server, does not fsync the finished file).
 */
export async function startTusd(binary, tempDir) {
  const port = await freePort();
  const dir = join(tempDir, 'tusd-files');
  mkdirSync(dir);
  const entry = startProgram('tusd', binary.path, [
    '-host',
    HOST,
    '-port',
    String(port),
    '-upload-dir',
    dir,
    '-base-path',
    '/files/',
    '-disable-download',
  ]);
  const url = `http://${HOST}:${port}`;
  // tusd answers its Prometheus metrics at /metrics once it listens.
  await orFail(waitFor(`${url}/metrics`, 'tusd'));
  return { entry, endpoint: `${url}/files/` };
}
