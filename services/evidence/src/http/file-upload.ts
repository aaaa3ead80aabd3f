import { mkdirSync } from 'node:fs';
import type { RequestHandler } from 'express';
import multer from 'multer';
import { formatBytes, payloadTooLarge } from '@portal/platform';

/**
 * Multipart forms with at most one evidence file (field "file"): the file streams to a temporary
 * folder on disk, never whole into memory, and is refused once it passes the largest limit.
 */
export function evidenceFileUpload(tmpDir: string, maxBytes: number): RequestHandler {
  mkdirSync(tmpDir, { recursive: true });
  const upload = multer({
    dest: tmpDir,
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
