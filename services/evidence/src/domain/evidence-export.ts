import type { ExportedFile } from '@portal/contracts';
import type { BlobStore } from '@portal/platform';
import type { EvidenceRecord, StoredVariant } from './evidence-record.js';

export interface ExportedItem {
  record: EvidenceRecord;
  files: ExportedFile[];
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
  'video/x-matroska': 'mkv',
  'audio/mp4': 'm4a',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/webm': 'webm',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/aac': 'aac',
};

/** A file name for a variant, with the extension its type usually has (.bin when unknown). */
export function exportFileName(variant: StoredVariant, contentType: string): string {
  return `${variant}.${EXTENSIONS[contentType.split(';')[0]!.trim().toLowerCase()] ?? 'bin'}`;
}

/** The files an item has in the blob store: the original and every derivative. */
export async function exportedFiles(record: EvidenceRecord, blobs: BlobStore): Promise<ExportedFile[]> {
  const keys: [StoredVariant, string | null][] = [
    ['original', record.original_key],
    ['display', record.display_key],
    ['thumb', record.thumb_key],
    ['poster', record.poster_key],
  ];
  const files: ExportedFile[] = [];
  for (const [variant, key] of keys) {
    const info = key ? await blobs.stat(key) : null;
    if (info) files.push({ variant, name: exportFileName(variant, info.contentType), contentType: info.contentType, size: info.size });
  }
  return files;
}
