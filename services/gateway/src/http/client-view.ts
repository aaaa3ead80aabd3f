import type { IncomingMessage } from 'node:http';

/** Whether a hop is a trusted proxy (hop 0: the socket's peer): fastify's trustProxy function, as the gateway gave it. */
export type TrustFunction = (address: string, hop: number) => boolean;

/** The last value of a header a proxy may have appended to (as fastify reads X-Forwarded-*). */
function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',');
  return comma === -1 ? value.trim() : value.slice(comma + 1).trim();
}

/** The request's protocol as fastify's `request.protocol` reads it: a trusted proxy's X-Forwarded-Proto, else the socket's. */
export function protocolOf(req: IncomingMessage, trust: TrustFunction | false): string {
  const forwarded = req.headers['x-forwarded-proto'];
  if (trust && typeof forwarded === 'string' && forwarded !== '' && trust(req.socket.remoteAddress ?? '', 0)) return lastEntry(forwarded);
  return (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
}

/** The request's host as fastify's `request.host` reads it: a trusted proxy's X-Forwarded-Host, else Host. */
export function hostOf(req: IncomingMessage, trust: TrustFunction | false): string {
  const forwarded = req.headers['x-forwarded-host'];
  if (trust && typeof forwarded === 'string' && forwarded !== '' && trust(req.socket.remoteAddress ?? '', 0)) return lastEntry(forwarded);
  return req.headers.host ?? '';
}
