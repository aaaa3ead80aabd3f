import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { formatBytes, payloadTooLarge, route } from '@portal/platform';

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
  return (req, res, next) => {
    upload(req, res, (error: unknown) => {
      if ((error as { code?: string } | undefined)?.code === 'LIMIT_FILE_SIZE') {
        return next(payloadTooLarge(`The file is too large (at most ${formatBytes(maxBytes)})`));
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
