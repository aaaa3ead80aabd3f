import { z } from 'zod';

const videoSchema = z.object({
  url: z.string().meta({ description: 'Video URL (MP4 or WebM)' }),
  captionsUrl: z.string().nullable().meta({ description: 'WebVTT captions URL' }),
});

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
  })
  .meta({ id: 'PublicConfig' });
export type PublicConfig = z.infer<typeof publicConfigSchema>;
