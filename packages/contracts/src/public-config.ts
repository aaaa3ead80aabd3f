import { z } from 'zod';

const videoSchema = z.object({
  url: z.string().meta({ description: 'Video URL (MP4 or WebM)' }),
  captionsUrl: z.string().nullable().meta({ description: 'WebVTT captions URL' }),
});

/** The participation terms a person accepts when registering (TERMS_VERSION, TERMS_TEXT, TERMS_URL). */
export const participationTermsSchema = z.object({
  version: z.string().meta({ description: 'Sent back by the registration form; recorded with the account' }),
  text: z.string().nullable().meta({ description: 'The terms in words, shown beside the checkbox' }),
  url: z.string().nullable().meta({ description: 'Where the full terms are, when they live elsewhere' }),
});
export type ParticipationTerms = z.infer<typeof participationTermsSchema>;

export const DEFAULT_TERMS_VERSION = '1';
export const DEFAULT_TERMS_TEXT =
  'I take part of my own free will. The organisers keep what I upload, may show items they choose in the public archive, ' +
  'and export or delete everything held on me when I ask.';

/**
 * The event-specific words and links of one run of the investigation. They come from the
 * gateway's configuration at run time (GET /api/config), so ops change them without a rebuild.
 */
export const publicConfigSchema = z
  .object({
    productName: z.string(),
    streetCorner: z.string().meta({ description: 'Where informants stand on their appointment date' }),
    libraryEntryway: z.string().meta({ description: 'Where to wait in bad weather' }),
    arriveEarly: z.string().meta({ description: 'How early to arrive, in words' }),
    publicAfterDate: z.string().meta({ description: 'Date after which selected contributions may be made public, in words' }),
    spyOnUrl: z.string(),
    ticketUrl: z.string(),
    publicLocationDecimals: z
      .number()
      .int()
      .meta({ description: 'Decimals to which a position from "Add my location" is rounded in public answers (3: about 100 m)' }),
    onboardingVideo: videoSchema,
    tutorialVideo: videoSchema,
    terms: participationTermsSchema,
  })
  .meta({ id: 'PublicConfig' });
export type PublicConfig = z.infer<typeof publicConfigSchema>;

/** The street corner and the bad-weather place when the configuration names none (STREET_CORNER, LIBRARY_ENTRYWAY). */
export const DEFAULT_STREET_CORNER = 'the corner of Main Street and First Avenue';
export const DEFAULT_LIBRARY_ENTRYWAY = 'the entryway of the Central Library';
