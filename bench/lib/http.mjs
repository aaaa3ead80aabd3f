// HTTP helpers of the benches (loopback only): free ports, readiness, sign-in, JSON.
import { createServer } from 'node:net';
import { HOST } from './runner.mjs';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(url, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) return;
      last = `answered ${response.status}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not become ready at ${url} within ${timeoutMs / 1000} s (${last})`);
}

/** Signs in through the gateway; answers the session cookie ("name=value"). */
export async function login(baseUrl, { username, password }) {
  const response = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`login of ${username} at ${baseUrl} answered ${response.status}: ${body}`);
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .find((pair) => pair.includes('='));
  if (!cookie) throw new Error(`login at ${baseUrl} set no cookie`);
  return cookie;
}

export async function getJson(url, headers) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** A request whose answer must have the given status; answers the parsed JSON body (or the text). */
export async function expectStatus(url, init, status, what) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  if (response.status !== status)
    throw new Error(`${what}: ${init.method ?? 'GET'} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  try {
    return { response, body: JSON.parse(text) };
  } catch {
    return { response, body: text };
  }
}

/** Runs async work over items with at most `limit` at once. */
export async function eachLimited(items, limit, work) {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Every item of a paginated list (GET path?limit=100, then each Link rel="next"). */
export async function listAll(baseUrl, path, cookie) {
  const items = [];
  let next = `${baseUrl}${path}${path.includes('?') ? '&' : '?'}limit=100`;
  while (next) {
    const response = await fetch(next, { headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${next} answered ${response.status}: ${text}`);
    items.push(...JSON.parse(text));
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    next = link ? new URL(link[1], baseUrl).href : null;
  }
  return items;
}
