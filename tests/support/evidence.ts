import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { waitFor } from '@portal/platform/testing';
import type { ApiClient } from './api-client.js';

export interface EvidenceItem {
  id: string;
  title: string;
  notes: string;
  location: string | null;
  media_type: number;
  aws_url: string | null;
  thumbnail_url: string | null;
  poster_url: string | null;
  placeholder: string | null;
  duration: number | null;
  media_status: 'none' | 'processing' | 'ready' | 'failed';
  media_error: string | null;
  is_public: boolean;
  date_posted: string;
  user_id: string;
  username: string;
  avatar_AWS_URL: string | null;
}

/** Uploads a file with the plain multipart route; answers the response. */
export function uploadEvidence(client: ApiClient, file: string, fields: Record<string, string> = {}, type = 'application/octet-stream') {
  const form = new FormData();
  for (const [name, value] of Object.entries({ title: 'Supporting Evidence', notes: '', ...fields })) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(readFileSync(file))], { type }), basename(file));
  return client.postForm('/api/evidence', form);
}

/** Waits until the media of an item is ready (or failed) as its owner sees it. */
/**
 * Waits for a video's last display copy: a phone video is ready first with a remux of its streams
 * (its URL's version ends in -remuxed), and its 720p copy replaces it shortly after.
 */
export async function waitForFinalMedia(client: ApiClient, id: string, timeoutMs = 120_000): Promise<EvidenceItem> {
  return waitFor(
    async () => {
      const response = await client.get(`/api/evidence/item/${id}`);
      if (response.status !== 200 || response.data.media_status === 'processing') return null;
      return String(response.data.aws_url ?? '').includes('-remuxed') ? null : (response.data as EvidenceItem);
    },
    { timeoutMs, intervalMs: 200, what: `the last display copy of ${id}` },
  );
}

export async function waitForMedia(client: ApiClient, id: string, timeoutMs = 60_000): Promise<EvidenceItem> {
  return waitFor(
    async () => {
      const response = await client.get(`/api/evidence/item/${id}`);
      return response.status === 200 && response.data.media_status !== 'processing' ? (response.data as EvidenceItem) : null;
    },
    { timeoutMs, intervalMs: 100, what: `media of ${id}` },
  );
}
