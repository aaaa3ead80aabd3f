// A TCP proxy that holds every chunk a client sends for DELAY_MS before passing it on to
// UPSTREAM (host:port): a server at a network distance (a managed MongoDB in another zone), on
// loopback. Answers go back at once, so a request's round trip grows by DELAY_MS (at the timer's
// 1 ms resolution); chunks keep their order. Started by bench/mongo/run.mjs as a child process;
// tells its port over IPC.
import { createServer, connect } from 'node:net';

const [host, port] = (process.env.UPSTREAM ?? '').split(':');
const delayMs = Number(process.env.DELAY_MS ?? '0');

const server = createServer((client) => {
  const upstream = connect({ host, port: Number(port) });
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
  upstream.on('data', (chunk) => client.write(chunk));
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('close', () => setTimeout(close, delayMs + 1));
  upstream.on('close', close);
  client.on('error', close);
  upstream.on('error', close);
});

server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }));
process.on('SIGTERM', () => process.exit(0));
