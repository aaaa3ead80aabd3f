// A MongoDB server at a network distance, on loopback: bench/mongo and bench/lookups measure how
// their round trips add up when the database is a few milliseconds away (a managed MongoDB in
// another zone).
import { orFail, startChild } from './runner.mjs';

/** The server behind bench/mongo/delay-proxy.mjs (a child process that stops with the bench), `rtt` ms further away: its URL. */
export async function delayedMongoUrl(url, rtt, name) {
  const target = new URL(url);
  const entry = startChild(
    name,
    'bench/mongo/delay-proxy.mjs',
    { UPSTREAM: `${target.hostname}:${target.port || 27017}`, DELAY_MS: String(rtt) },
    { ipc: true },
  );
  const { port } = await orFail(new Promise((resolve) => entry.child.on('message', resolve)));
  target.host = `127.0.0.1:${port}`;
  target.searchParams.set('directConnection', 'true');
  return target.href;
}
