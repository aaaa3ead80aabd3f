import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { formatBytes, payloadTooLarge, route } from '@portal/platform';

/** What a form adds around its file: at most 10 fields of 64 KB, part headers and boundaries. */
const FORM_ALLOWANCE = 1024 * 1024;

/**
 * Multipart forms with at most one evidence file (field "file"): the file streams to a temporary
 * folder on disk, never whole into memory, and is refused once it passes the largest limit.
 */
export function evidenceFileUpload(tmpDir: string, maxBytes: number): RequestHandler {
  mkdirSync(tmpDir, { recursive: true });
  const upload = multer({
    dest: tmpDir,
    // Files get random names in tmpDir; the client's name is never used for storage. Keeping it
    // whole (not cut to its last segment) only means that a name such as "." or "dir/" still
    // counts as a file, instead of the file being dropped without a word and a note filed.
    preservePath: true,
    limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  }).single('file');
  const tooLarge = `The file is too large (at most ${formatBytes(maxBytes)})`;
  return (req, res, next) => {
    // A form declared larger than its file may be plus its fields is refused before it is read
    // (the gateway refuses it first; this holds for whatever else reaches the service).
    if (Number(req.headers['content-length']) > maxBytes + FORM_ALLOWANCE) {
      res.set('Connection', 'close');
      return next(payloadTooLarge(tooLarge));
    }
    upload(req, res, (error: unknown) => {
      if ((error as { code?: string } | undefined)?.code === 'LIMIT_FILE_SIZE') {
        return next(payloadTooLarge(tooLarge));
      }
      next(error);
    });
  };
}

/**
 * A route that receives a file: whatever happens, the temporary file is gone when it ends. The
 * service removes a file it took over itself; this catches a request refused before that (no
 * session, a missing title, an unknown item), whose file would otherwise stay on disk.
 */
export function routeWithFile(handler: (req: Request, res: Response) => Promise<unknown>): RequestHandler {
  return route(async (req, res) => {
    try {
      await handler(req, res);
    } finally {
      if (req.file) await rm(req.file.path, { force: true });
    }
  });
}
