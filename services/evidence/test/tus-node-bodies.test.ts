import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore } from '@tus/file-store';
import { Server, type Upload } from '@tus/server';
import { streamPatchBodiesFromNode, type PatchHandlerInternals } from '../src/http/tus-node-bodies.js';

// The evidence service replaces part of @tus/server's PATCH handler (src/http/tus-node-bodies.ts).
// A real tus server with a file store, patched as the service patches it: a PATCH must go through
// the replacement (its afterWrite runs, which tus's own path never calls) and store every byte.
// An upgrade of @tus/server that renames or reshapes what the patch relies on fails here.

let dir: string;
let http: HttpServer;
let url: string;
const written: Upload[] = [];

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tus-node-bodies-'));
  const tus = new Server({ path: '/uploads', datastore: new FileStore({ directory: dir }), respectForwardedHeaders: false });
  streamPatchBodiesFromNode(tus, (upload) => written.push(upload));
  http = createServer((req, res) => void tus.handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => http?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('@tus/server as the evidence service patches it', () => {
  it('still has the PATCH handler internals the patch replaces', () => {
    const tus = new Server({ path: '/uploads', datastore: new FileStore({ directory: dir }) });
    const patch = tus.handlers.PATCH as unknown as PatchHandlerInternals;
    expect(typeof patch.send, 'PATCH handler send()').toBe('function');
    expect(typeof patch.writeToStore, 'PATCH handler writeToStore()').toBe('function');
    expect(typeof patch.store?.write, 'PATCH handler store.write()').toBe('function');
  });

  it('streams a PATCH body from Node into the store through the replacement, in two chunks', async () => {
    const created = await send('POST', '/uploads', { 'tus-resumable': '1.0.0', 'upload-length': '11' });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    const id = location.split('/').pop()!;
    const headers = { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream' };
    const first = await send('PATCH', location, { ...headers, 'upload-offset': '0' }, Buffer.from('hello '));
    expect(first.status).toBe(204);
    expect(first.headers['upload-offset']).toBe('6');
    const second = await send('PATCH', location, { ...headers, 'upload-offset': '6' }, Buffer.from('world'));
    expect(second.status).toBe(204);
    expect(second.headers['upload-offset']).toBe('11');
    // Both chunks went through the replacement (tus's own path never calls afterWrite).
    expect(written.map((upload) => upload.id)).toEqual([id, id]);
    expect(readFileSync(join(dir, id), 'utf8')).toBe('hello world');
  });

  it('refuses a PATCH body over the upload length as tus does (the replacement keeps its size limit)', async () => {
    const created = await send('POST', '/uploads', { 'tus-resumable': '1.0.0', 'upload-length': '4' });
    const location = String(created.headers.location);
    const answer = await send(
      'PATCH',
      location,
      { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      Buffer.from('too long'),
    );
    expect(answer.status).toBe(413);
  });
});
