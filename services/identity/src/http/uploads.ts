import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { formatBytes, payloadTooLarge, route } from '@portal/platform';

export interface PhotoUploadSettings {
  /** Where multipart files wait while they are checked (removed afterwards). */
  tmpDir: string;
  maxBytes: number;
}

/** What a form adds around its picture: at most 30 fields of 16 KB, part headers and boundaries. */
const FORM_ALLOWANCE = 1024 * 1024;

/**
 * Multipart parsing for forms that carry one picture. Files stream to a temporary folder, never
 * whole into memory; text fields are small and few.
 */
export function photoUpload(settings: PhotoUploadSettings, fields: string[], label: string): RequestHandler {
  mkdirSync(settings.tmpDir, { recursive: true });
  const upload = multer({
    dest: settings.tmpDir,
    limits: { fileSize: settings.maxBytes, files: 1, fields: 30, fieldSize: 16 * 1024, parts: 40 },
  }).fields(fields.map((name) => ({ name, maxCount: 1 })));
  const tooLarge = `${label} is too large (at most ${formatBytes(settings.maxBytes)})`;
  return (req, res, next) => {
    // A form declared larger than its picture may be plus its fields is refused before it is
    // read (the gateway refuses it first; this holds for whatever else reaches the service).
    if (Number(req.headers['content-length']) > settings.maxBytes + FORM_ALLOWANCE) {
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

/** The first file sent under any of the given field names. */
export function uploadedFile(files: Express.Request['files'], names: string[]): { path: string } | undefined {
  if (!files || Array.isArray(files)) return undefined;
  for (const name of names) {
    const file = files[name]?.[0];
    if (file) return { path: file.path };
  }
  return undefined;
}

/**
 * A route that receives pictures: whatever happens, the temporary files are gone when it ends.
 * The service removes a file it took over itself; this catches a request refused before that (an
 * invalid field, no session), whose file would otherwise stay on disk.
 */
export function routeWithFiles(handler: (req: Request, res: Response) => Promise<unknown>): RequestHandler {
  return route(async (req, res) => {
    try {
      await handler(req, res);
    } finally {
      const files = !req.files ? [] : Array.isArray(req.files) ? req.files : Object.values(req.files).flat();
      await Promise.all(files.map((file) => rm(file.path, { force: true })));
    }
  });
}
