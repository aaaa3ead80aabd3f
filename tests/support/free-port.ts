import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the ports handed out below come from: above the range the OS takes the local ports of
 * outgoing connections from (ip_local_port_range, 32768-60999 on Linux by default), else below
 * it. A port the OS picks for `listen(0)` comes from that range, and between the moment it is
 * picked and the moment a server binds it, a connection to Kafka, a browser or a service may be
 * given it as its local port: the server then fails with "address already in use".
 */
function portRange(): { from: number; to: number } {
  let [low, high] = [32768, 60999];
  try {
    const [first, last] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(first) && Number.isInteger(last)) [low, high] = [first!, last!];
  } catch {
    // not Linux: the default range
  }
  return 65535 - high >= 1000 ? { from: high + 1, to: 65535 } : { from: 10000, to: Math.max(10999, low - 1) };
}

const range = portRange();
/** Ports this process handed out already: never twice, even once their server has stopped. */
const handedOut = new Set<number>();

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  // Not events.once: its 'listening' promise rejects on 'error', where a port in use is an answer.
  const ok = await new Promise<boolean>((resolve) => {
    server.once('listening', () => resolve(true));
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1');
  });
  if (ok) await new Promise((resolve) => server.close(resolve));
  return ok;
}

/** A TCP port on 127.0.0.1 that was free a moment ago, for a process to listen on (see portRange). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range.from + Math.floor(Math.random() * (range.to - range.from + 1));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found between ${range.from} and ${range.to}`);
}
