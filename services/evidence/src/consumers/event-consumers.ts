import { TOPICS, mediaBlurredData, mediaProcessedData, mediaStillsData, userEventSchema } from '@portal/contracts';
import type { EventBus, Logger, Subscription } from '@portal/platform';
import type { EvidenceService } from '../domain/evidence-service.js';

/**
 * What the evidence service listens to: identity's user events (author copies, deletions) and the
 * media worker's results. Every reaction is idempotent, as delivery is at least once.
 */
export async function subscribeEvidenceConsumers(bus: EventBus, evidence: EvidenceService, logger: Logger): Promise<Subscription[]> {
  const users = await bus.subscribe({
    groupId: 'evidence',
    topics: [TOPICS.users],
    handler: async (message) => {
      const parsed = userEventSchema.safeParse(message.value);
      if (!parsed.success) return;
      const event = parsed.data;
      if (event.type === 'user.registered') {
        await evidence.onUserChanged({ userId: event.data.userId, username: event.data.username, avatar_AWS_URL: null });
      } else if (event.type === 'user.updated') {
        await evidence.onUserChanged(event.data);
      } else if (event.type === 'user.deleted') {
        await evidence.onUserDeleted(event.data.userId);
      }
    },
  });
  const media = await bus.subscribe({
    groupId: 'evidence.media-results',
    topics: [TOPICS.media],
    handler: async (message) => {
      if (message.value.type === 'media.stills') {
        // A video's poster and thumbnail, ahead of its display copy.
        const stills = mediaStillsData.safeParse(message.value.data);
        if (stills.success) await evidence.applyMediaStills(stills.data);
        else logger.warn({ eventId: message.value.id }, 'ignored malformed media stills');
        return;
      }
      if (message.value.type === 'media.blurred') {
        // Public copies made again after an administrator changed an item's faces.
        const blurred = mediaBlurredData.safeParse(message.value.data);
        if (blurred.success) await evidence.applyBlurred(blurred.data);
        else logger.warn({ eventId: message.value.id }, 'ignored a malformed blurred copies report');
        return;
      }
      const parsed = mediaProcessedData.safeParse(message.value.data);
      if (!parsed.success) {
        logger.warn({ eventId: message.value.id }, 'ignored a malformed media result');
        return;
      }
      await evidence.applyMediaResult(parsed.data);
    },
  });
  return [users, media];
}
