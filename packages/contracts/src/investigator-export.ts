import { z } from 'zod';
import { adminEvidenceListQuerySchema, type ReviewStatus } from './evidence.js';

/** So that the query fits in the 16 KB of request head Node accepts (ids of 37 characters with their commas). */
export const EXPORT_MAX_IDS = 300;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * GET /api/evidence/export: the administration list's filters (type, review_status, visibility,
 * q; without paging), or `ids`; the display copies of the media, and the originals too with
 * `originals=true`. Each filter is listed here and applied in InvestigatorExporter.pages
 * (evidence service): a filter added to the administration list is added to both, never
 * accepted and ignored.
 */
export const investigatorExportQuerySchema = adminEvidenceListQuerySchema
  .pick({ type: true, review_status: true, visibility: true, q: true })
  .extend({
    ids: z
      .string()
      .max(EXPORT_MAX_IDS * 37)
      .transform((value) => [
        ...new Set(
          value
            .split(',')
            .map((id) => id.trim().toLowerCase())
            .filter((id) => id !== ''),
        ),
      ])
      .refine(
        (ids) => ids.length > 0 && ids.length <= EXPORT_MAX_IDS,
        `ids must list 1 to ${EXPORT_MAX_IDS} evidence ids, separated by commas`,
      )
      .refine((ids) => ids.every((id) => UUID.test(id)), 'ids must be evidence ids (UUIDs), separated by commas')
      .optional()
      .meta({ description: `Only these items (comma-separated ids, at most ${EXPORT_MAX_IDS}); the filters are ignored then` }),
    originals: z
      .enum(['true', 'false'], { error: 'originals must be true or false' })
      .transform((value) => value === 'true')
      .optional()
      .meta({ description: 'Add every original file as sent (default false: display copies only)' }),
  });
export type InvestigatorExportQuery = z.infer<typeof investigatorExportQuerySchema>;

/** One line of manifest.csv / one item of manifest.json. */
export interface ManifestItem {
  id: string;
  title: string;
  notes: string;
  location: string | null;
  type: 'note' | 'photo' | 'video' | 'audio';
  posted: string;
  author: string;
  public: boolean;
  review_status: ReviewStatus;
  /** Paths inside the archive. */
  files: string[];
}
