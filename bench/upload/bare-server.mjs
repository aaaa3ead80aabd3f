// The upload bench's baseline: a bare node:http server that takes the same requests the tus
// client sends (POST to create, then PATCHes of any size at their offsets) and pipes each request's
// body straight into one file on the same disk. When the last byte is in, the file is flushed to
// disk (fsync) before the answer, as the portal does before it acknowledges an upload. Nothing
// else: no identity, no checks, no type detection, no second copy.
//
//   PORT=4000 DIR=/tmp/somewhere node bench/upload/bare-server.mjs
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.DIR;
/** id -> { path, length, offset } */
const uploads = new Map();

async function patch(req, res, upload) {
  const offset = Number(req.headers['upload-offset']);
  if (offset !== upload.offset) {
    req.resume();
    res.writeHead(409, { 'Tus-Resumable': '1.0.0' }).end();
    return;
  }
  let received = 0;
  req.on('data', (chunk) => {
    received += chunk.length;
  });
  await pipeline(req, createWriteStream(upload.path, { flags: 'r+', start: offset }));
  upload.offset += received;
  if (upload.offset === upload.length) {
    const handle = await open(upload.path, 'r');
    await handle.sync();
    await handle.close();
  }
  res.writeHead(204, { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(upload.offset) }).end();
}

const server = createServer((req, res) => {
  const fail = (error) => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(error));
  };
  if (req.url === '/healthz') {
    req.resume();
    res.writeHead(200).end('ok');
    return;
  }
  if (req.method === 'POST') {
    req.resume();
    const id = randomUUID();
    const path = join(dir, id);
    const length = Number(req.headers['upload-length']);
    open(path, 'w')
      .then((handle) => handle.close())
      .then(() => {
        uploads.set(id, { path, length, offset: 0 });
        res.writeHead(201, { 'Tus-Resumable': '1.0.0', Location: `/files/${id}` }).end();
      }, fail);
    return;
  }
  const id = req.url.split('/').pop();
  const upload = uploads.get(id);
  if (!upload) {
    req.resume();
    res.writeHead(404).end();
    return;
  }
  if (req.method === 'PATCH') {
    patch(req, res, upload).catch(fail);
  } else if (req.method === 'DELETE') {
    uploads.delete(id);
    rm(upload.path, { force: true }).then(() => res.writeHead(204).end(), fail);
  } else {
    req.resume();
    res.writeHead(200, { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(upload.offset), 'Upload-Length': String(upload.length) }).end();
  }
});
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
