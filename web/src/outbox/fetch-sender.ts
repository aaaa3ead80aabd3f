// Sends an outbox entry with fetch alone (notes: POST /api/evidence; media: the tus protocol by
// hand, resuming at the stored upload address): what the service worker uses when Background
// Sync wakes it with no page open. The page uses tus-js-client (evidence/upload.ts), which needs
// XMLHttpRequest, for its progress bar.
// The uploads module alone: the service worker's build does not carry the schemas (zod).
import { uploadChunkSize } from '@portal/contracts/uploads';
import type { OutboxEntry } from './store';

export const UPLOADS_ENDPOINT = '/api/evidence/uploads';
/** IDEMPOTENCY_KEY_HEADER of @portal/contracts (its evidence module would bring zod along). */
const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const TUS = { 'Tus-Resumable': '1.0.0' };

/** A refusal by the server (status ≥ 400) with its sentence; status 0 when no answer came. */
export class SendError extends Error {
  override readonly name = 'SendError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }

  /** Refused for good (too large, not media, invalid): sending it again would not help. */
  get refused(): boolean {
    return this.status >= 400 && this.status < 500 && ![401, 403, 408, 409, 423, 429].includes(this.status);
  }
}

async function refusal(response: Response): Promise<SendError> {
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === 'string' && body.message) return new SendError(body.message, response.status);
  } catch {
    // not JSON
  }
  return new SendError(`The server answered ${response.status}`, response.status);
}

async function request(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { credentials: 'same-origin', ...init });
  } catch (error) {
    throw new SendError(error instanceof Error ? error.message : 'The request failed', 0);
  }
}

function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export interface FetchSendHooks {
  /** The upload's address once made (kept to resume later). */
  onUploadUrl: (url: string) => Promise<void> | void;
  /** Bytes the server confirmed. */
  onStored: (bytes: number) => Promise<void> | void;
}

/** Sends one entry; answers the id of the item it became. */
export async function sendWithFetch(entry: OutboxEntry, hooks: FetchSendHooks): Promise<string> {
  if (!entry.file) {
    const response = await request('/api/evidence', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', [IDEMPOTENCY_KEY_HEADER]: entry.id },
      body: JSON.stringify({ title: entry.title, notes: entry.notes, ...(entry.location ? { location: entry.location } : {}) }),
    });
    if (!response.ok) throw await refusal(response);
    return ((await response.json()) as { id: string }).id;
  }
  const file = entry.file;
  let url = entry.uploadUrl;
  let offset = 0;
  if (url) {
    const head = await request(url, { method: 'HEAD', headers: TUS });
    if (head.ok) {
      const finished = head.headers.get('x-evidence-id');
      if (finished) return finished;
      offset = Number(head.headers.get('upload-offset') ?? 0);
    } else if (head.status === 404 || head.status === 410 || head.status === 403) {
      url = null; // gone (expired): start again; the idempotency key still makes one item
    } else {
      throw new SendError(`The server answered ${head.status}`, head.status);
    }
  }
  if (!url) {
    const metadata = {
      title: entry.title,
      notes: entry.notes,
      location: entry.location ?? '',
      filename: entry.fileName ?? 'evidence',
      filetype: entry.fileType ?? '',
      idempotencyKey: entry.id,
    };
    const created = await request(UPLOADS_ENDPOINT, {
      method: 'POST',
      headers: {
        ...TUS,
        'Upload-Length': String(file.size),
        'Upload-Metadata': Object.entries(metadata)
          .map(([key, value]) => `${key} ${base64(value)}`)
          .join(','),
      },
    });
    if (created.status !== 201) throw await refusal(created);
    const location = created.headers.get('location');
    if (!location) throw new SendError('The server made no upload address', created.status);
    url = new URL(location, new URL(UPLOADS_ENDPOINT, self.location.origin)).pathname;
    await hooks.onUploadUrl(url);
  }
  const chunk = uploadChunkSize(file.size);
  for (;;) {
    const response = await request(url, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', accept: 'application/json' },
      body: file.slice(offset, Math.min(file.size, offset + chunk)),
    });
    if (response.status === 200) {
      const id = response.headers.get('x-evidence-id');
      if (id) return id;
      return ((await response.json()) as { id: string }).id;
    }
    if (response.status !== 204) throw await refusal(response);
    const next = Number(response.headers.get('upload-offset') ?? offset);
    if (!(next > offset)) throw new SendError('The upload did not move forward', response.status);
    offset = next;
    await hooks.onStored(offset);
  }
}
