// The archive bench's baseline: a bare node:http server that answers every request with one
// recorded answer of the gateway (the same status, the same headers in the same order, the same
// body bytes). Only Date, Connection and Keep-Alive are node's own, as for any node server.
//
//   PORT=4000 ANSWER_FILE=answer.json node bench/archive/bare-server.mjs
//   (answer.json: { "status": 200, "rawHeaders": ["Name", "value", ...], "body": "<base64>" })
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const answer = JSON.parse(readFileSync(process.env.ANSWER_FILE, 'utf8'));
const body = Buffer.from(answer.body, 'base64');
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const headers = [];
for (let i = 0; i < answer.rawHeaders.length; i += 2) {
  if (!NODE_OWN.has(answer.rawHeaders[i].toLowerCase())) headers.push(answer.rawHeaders[i], answer.rawHeaders[i + 1]);
}

const server = createServer((req, res) => {
  req.resume();
  res.writeHead(answer.status, headers);
  res.end(body);
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
