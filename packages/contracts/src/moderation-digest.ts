import { z } from 'zod';

/** Items that came into the review queue in a time span (posted, or sent back by their owner's edit, and still new), by kind (GET /internal/evidence/posted-counts, evidence → identity). */
export const postedCountsSchema = z.object({
  notes: z.number().int().nonnegative(),
  photos: z.number().int().nonnegative(),
  videos: z.number().int().nonnegative(),
  audio: z.number().int().nonnegative(),
});
export type PostedCounts = z.infer<typeof postedCountsSchema>;

/**
 * `moderation-digest.requested` (topic identity.moderation): one administrator is to be told what
 * is new to review; the notifier turns it into an e-mail. It carries the address, like
 * identity's other mail events.
 */
export const moderationDigestRequestedData = z.object({
  userId: z.string(),
  email: z.string(),
  full_name: z.string(),
  counts: postedCountsSchema,
  since: z.string(),
  until: z.string(),
});
export type ModerationDigestRequestedData = z.infer<typeof moderationDigestRequestedData>;
