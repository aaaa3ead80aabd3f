import type { Writable } from 'node:stream';
import { csvLine, type InvestigatorExportQuery, type ManifestItem } from '@portal/contracts';
import { auditEvent, streamZip, type BlobStore, type CallerIdentity, type Logger } from '@portal/platform';
import type { EvidenceRecord } from './evidence-record.js';
import { exportFileName } from './evidence-export.js';
import type { EvidenceFilter, EvidenceRepository } from '../repositories/evidence-repository.js';
import { wordsOf } from './search-words.js';

export interface InvestigatorExportDeps {
  evidence: EvidenceRepository;
  blobs: BlobStore;
  logger: Logger;
  onEventsCommitted: () => void;
  clock?: () => number;
}

export interface PreparedInvestigatorExport {
  fileName: string;
  writeTo(destination: Writable): Promise<void>;
}

const PAGE = 200;
const TYPE_NAMES = { 1: 'note', 2: 'photo', 3: 'video', 4: 'audio' } as const;
export const MANIFEST_COLUMNS = [
  'id',
  'title',
  'notes',
  'location',
  'type',
  'posted',
  'author',
  'public',
  'review_status',
  'files',
] as const;

/**
 * What an administrator hands the investigator: one zip archive with manifest.csv and
 * manifest.json (one entry per item: id, title, notes, location, type, posted date, author,
 * public, review status, the archive paths of its files) and each item's display copy under
 * media/<id>/ (and its original with `originals`). Items are read a page at a time and each file
 * streams from the blob store into the archive, stored without recompression; only the manifest's
 * text is kept until the end, where it is written.
 */
export class InvestigatorExporter {
  constructor(private readonly deps: InvestigatorExportDeps) {}

  async prepare(caller: CallerIdentity, query: InvestigatorExportQuery): Promise<PreparedInvestigatorExport> {
    // Checked before anything is read or recorded: a search of too many words is a 400.
    const filter = filterOf(query);
    const pages = this.pages(query, filter);
    // The first page is read before anything is sent, so a store outage is a clean error.
    const first = await pages.next();
    const now = new Date((this.deps.clock ?? Date.now)());
    await this.deps.evidence.appendEvents([
      auditEvent({
        actor: caller,
        action: 'evidence.export',
        target: {
          type: 'archive',
          id: null,
          label: query.ids ? `${query.ids.length} chosen ${query.ids.length === 1 ? 'item' : 'items'}` : 'Evidence matching the filters',
        },
        details: {
          ...(query.ids
            ? { ids: query.ids }
            : Object.fromEntries(FILTERS.flatMap((name) => (query[name] !== undefined ? [[name, query[name]]] : [])))),
          originals: query.originals ?? false,
        },
      }),
    ]);
    this.deps.onEventsCommitted();
    return {
      fileName: `evidence-export-${now.toISOString().slice(0, 19).replace(/:/g, '-')}.zip`,
      writeTo: (destination) =>
        streamZip(destination, async (add) => {
          const manifest: ManifestItem[] = [];
          const write = async (records: EvidenceRecord[]) => {
            for (const record of records) {
              const files: string[] = [];
              for (const [variant, key, type] of this.filesOf(record, query.originals ?? false)) {
                const object = await this.deps.blobs.get(key);
                if (!object) continue;
                const path = `media/${record.id}/${exportFileName(variant, type ?? object.info.contentType)}`;
                await add(object.body, path, true);
                files.push(path);
              }
              manifest.push(manifestItem(record, files));
            }
          };
          if (!first.done) await write(first.value);
          for await (const records of pages) await write(records);
          const csv =
            csvLine(MANIFEST_COLUMNS) + manifest.map((item) => csvLine(MANIFEST_COLUMNS.map((column) => csvValue(item, column)))).join('');
          await add(csv, 'manifest.csv', false);
          const missing = query.ids ? query.ids.filter((id) => !manifest.some((item) => item.id === id)) : [];
          await add(
            JSON.stringify({ exported_at: now.toISOString(), exported_by: caller.username, query, missing, items: manifest }, null, 2),
            'manifest.json',
            false,
          );
        }).catch((error: unknown) => {
          this.deps.logger.warn({ err: error }, 'evidence export stopped');
          throw error;
        }),
    };
  }

  /** The chosen items, or every item matching the filters (newest first), a page at a time. */
  private async *pages(query: InvestigatorExportQuery, filter: EvidenceFilter): AsyncGenerator<EvidenceRecord[]> {
    if (query.ids) {
      for (let start = 0; start < query.ids.length; start += PAGE) {
        const found: EvidenceRecord[] = [];
        for (const id of query.ids.slice(start, start + PAGE)) {
          const record = await this.deps.evidence.findById(id);
          if (record) found.push(record);
        }
        yield found;
      }
      return;
    }
    let cursor: string | undefined;
    do {
      const page = await this.deps.evidence.list(filter, PAGE, cursor);
      yield page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  private filesOf(record: EvidenceRecord, originals: boolean): ['display' | 'original', string, string | null][] {
    const files: ['display' | 'original', string, string | null][] = [];
    if (record.display_key && record.media_status === 'ready') files.push(['display', record.display_key, record.display_type]);
    if (originals && record.original_key) files.push(['original', record.original_key, record.original_type]);
    return files;
  }
}

/** The export's filters, each applied as GET /api/evidence/admin applies it. */
const FILTERS = ['type', 'review_status', 'visibility', 'q'] as const satisfies readonly (keyof InvestigatorExportQuery)[];

function filterOf(query: InvestigatorExportQuery): EvidenceFilter {
  return {
    type: query.type,
    reviewStatus: query.review_status,
    isPublic: query.visibility === undefined ? undefined : query.visibility === 'public',
    words: wordsOf(query.q),
  };
}

function manifestItem(record: EvidenceRecord, files: string[]): ManifestItem {
  return {
    id: record.id,
    title: record.title,
    notes: record.notes,
    location: record.location,
    type: TYPE_NAMES[record.media_type],
    posted: record.date_posted,
    author: record.username,
    public: record.is_public,
    review_status: record.review_status,
    files,
  };
}

function csvValue(item: ManifestItem, column: (typeof MANIFEST_COLUMNS)[number]): string | boolean | null {
  const value = item[column];
  return Array.isArray(value) ? value.join(' ') : value;
}
