import { Upload, defaultOptions, type DetailedError, type HttpResponse, type PreviousUpload } from 'tus-js-client';
import { MESSAGES, uploadChunkSize, type Evidence } from '@portal/contracts';

export const UPLOAD_ENDPOINT = '/api/evidence/uploads';
export const UPLOAD_RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000, 30000];

export interface UploadFields {
  title: string;
  notes: string;
  location: string | null;
}

export interface UploadOutcome {
  /** The new item, from the answer to the last PATCH; null when that answer was lost. */
  item: Evidence | null;
  /** The new item's id (X-Evidence-Id), when known. */
  id: string | null;
}

export interface UploadCallbacks {
  onProgress: (bytesSent: number, bytesTotal: number) => void;
  /** True while the browser is offline and the upload waits to go on. */
  onWaitingForNetwork: (waiting: boolean) => void;
  /** The upload's address, once the server made it (the outbox keeps it to resume after a reload). */
  onUploadUrl?: (url: string) => void;
  /** Bytes the server confirmed, after each chunk. */
  onChunkStored?: (bytesStored: number) => void;
}

/** How an outbox entry is sent: its own upload address and its idempotency key. */
export interface OutboxUploadOptions {
  /** Where a previous attempt stopped (resumed with HEAD); null to start a new upload. */
  uploadUrl: string | null;
  /** Sent as the idempotencyKey metadata: the server makes one item of this capture. */
  idempotencyKey: string;
}

export interface RunningUpload {
  done: Promise<UploadOutcome>;
  /** Stops sending (the server keeps what it has; the same file resumes later). */
  abort: () => void;
}

/** A refused upload, with the server's sentence. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

function outcomeOf(response: HttpResponse): UploadOutcome {
  const id = response.getHeader('X-Evidence-Id') ?? null;
  const body = response.getBody();
  if (body) {
    try {
      const item = JSON.parse(body) as Evidence;
      if (item && typeof item.id === 'string') return { item, id: item.id };
    } catch {
      // not the item: fall back on the id header
    }
  }
  return { item: null, id };
}

/** The person-readable reason of a failed upload: the server's own message when it answered. */
export function uploadErrorMessage(error: unknown): string {
  const response = (error as Partial<DetailedError> | null)?.originalResponse ?? null;
  if (!response) {
    return 'The connection was lost before the upload finished. Check your connection and press Upload Evidence again: it will continue where it stopped.';
  }
  const status = response.getStatus();
  try {
    const body = JSON.parse(response.getBody()) as { message?: unknown };
    if (typeof body.message === 'string' && body.message) return body.message;
  } catch {
    // not JSON
  }
  if (status === 413) return 'The file is too large.';
  if (status === 415) return MESSAGES.unsupportedEvidenceFile;
  if (status === 401) return MESSAGES.notSignedIn;
  return `The upload failed (the server answered ${status}). Please try again.`;
}

function sameFields(previous: PreviousUpload, fields: UploadFields): boolean {
  return (
    previous.metadata.title === fields.title &&
    (previous.metadata.notes ?? '') === fields.notes &&
    (previous.metadata.location ?? '') === (fields.location ?? '')
  );
}

/**
 * Sends a file with the tus resumable-upload protocol, in chunks of 5 MiB (larger ones for a large
 * file: uploadChunkSize in @portal/contracts). A dropped connection is retried (HEAD asks the
 * server how much it has, then the upload goes on from there); while the browser is offline the
 * upload waits for the connection to come back. The same file with the same title, notes and
 * location, sent again after a failure or a reload, resumes where it stopped.
 */
export function startUpload(file: File, fields: UploadFields, callbacks: UploadCallbacks, outbox?: OutboxUploadOptions): RunningUpload {
  let upload: Upload | null = null;
  let stopped = false;
  let onOnline: (() => void) | null = null;

  const done = new Promise<UploadOutcome>((resolve, reject) => {
    upload = new Upload(file, {
      endpoint: UPLOAD_ENDPOINT,
      metadata: {
        title: fields.title,
        notes: fields.notes,
        location: fields.location ?? '',
        filename: file.name,
        filetype: file.type,
        ...(outbox ? { idempotencyKey: outbox.idempotencyKey } : {}),
      },
      chunkSize: uploadChunkSize(file.size),
      retryDelays: UPLOAD_RETRY_DELAYS,
      // An outbox entry keeps its own upload address (in IndexedDB, beside the file).
      storeFingerprintForResuming: !outbox,
      removeFingerprintOnSuccess: true,
      ...(outbox?.uploadUrl ? { uploadUrl: outbox.uploadUrl } : {}),
      onUploadUrlAvailable: () => {
        const url = upload?.url;
        if (url) callbacks.onUploadUrl?.(url);
      },
      onChunkComplete: (_chunkSize, bytesAccepted) => callbacks.onChunkStored?.(bytesAccepted),
      onProgress: callbacks.onProgress,
      onSuccess: ({ lastResponse }) => resolve(outcomeOf(lastResponse)),
      onError: (error) => {
        const answered = (error as Partial<DetailedError>).originalResponse ?? null;
        if (!answered && !stopped && typeof navigator !== 'undefined' && navigator.onLine === false) {
          // Offline: tus does not retry then. Go on as soon as the connection is back.
          callbacks.onWaitingForNetwork(true);
          onOnline = () => {
            onOnline = null;
            callbacks.onWaitingForNetwork(false);
            if (!stopped) upload?.start();
          };
          window.addEventListener('online', onOnline, { once: true });
          return;
        }
        reject(new UploadError(uploadErrorMessage(error), answered?.getStatus() ?? 0));
      },
    });
    const current = upload;
    if (outbox) {
      current.start();
      return;
    }
    current
      .findPreviousUploads()
      .then((previous) => {
        const match = previous.find((entry) => sameFields(entry, fields));
        if (match) current.resumeFromPreviousUpload(match);
        // Unfinished uploads of the same file with other words are forgotten here, and ended on the
        // server: until then they count against the participant's share of unfinished uploads.
        for (const entry of previous) {
          if (entry === match) continue;
          void defaultOptions.urlStorage.removeUpload(entry.urlStorageKey).catch(() => undefined);
          if (entry.uploadUrl) void Upload.terminate(entry.uploadUrl, { retryDelays: [] }).catch(() => undefined);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) current.start();
      });
  });

  return {
    done,
    abort: () => {
      stopped = true;
      if (onOnline) window.removeEventListener('online', onOnline);
      void upload?.abort();
    },
  };
}
