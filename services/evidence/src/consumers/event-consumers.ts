import {
  TOPICS,
  mediaBlurredData,
  mediaProcessedData,
  mediaStillsData,
  userDeletedData,
  userRegisteredData,
  userUpdatedData,
} from '@portal/contracts';
import { parseEventData, type EventBus, type HealthCheck, type Subscription } from '@portal/platform';
import type { EvidenceService } from '../domain/evidence-service.js';

export const EVIDENCE_USERS_GROUP = 'evidence';
export const EVIDENCE_MEDIA_RESULTS_GROUP = 'evidence.media-results';

export interface ConsumerOptions {
  /** The stores the handlers need (readiness checks): a failure while one is away holds the message. */
  dependencies: HealthCheck[];
  signal?: AbortSignal;
}

/**
 * What the evidence service listens to: identity's user events (author copies, deletions) and the
 * media worker's results. Every reaction is idempotent, as delivery is at least once. An event of
 * these types whose data breaks its schema is a dead letter; other types are not for this service.
 */
export function subscribeUserEvents(bus: EventBus, evidence: EvidenceService, options: ConsumerOptions): Promise<Subscription> {
  return bus.subscribe({
    groupId: EVIDENCE_USERS_GROUP,
    topics: [TOPICS.users],
    dependencies: options.dependencies,
    ...(options.signal ? { signal: options.signal } : {}),
    handler: async (message) => {
      const { type } = message.value;
      if (type === 'user.registered') {
        const data = parseEventData(userRegisteredData, message.value);
        await evidence.onUserChanged({ userId: data.userId, username: data.username, avatar_AWS_URL: null });
      } else if (type === 'user.updated') {
        await evidence.onUserChanged(parseEventData(userUpdatedData, message.value));
      } else if (type === 'user.deleted') {
        await evidence.onUserDeleted(parseEventData(userDeletedData, message.value).userId);
      }
    },
  });
}

export function subscribeMediaResults(bus: EventBus, evidence: EvidenceService, options: ConsumerOptions): Promise<Subscription> {
  return bus.subscribe({
    groupId: EVIDENCE_MEDIA_RESULTS_GROUP,
    topics: [TOPICS.media],
    dependencies: options.dependencies,
    ...(options.signal ? { signal: options.signal } : {}),
    handler: async (message) => {
      const { type } = message.value;
      // A video's poster and thumbnail, ahead of its display copy.
      if (type === 'media.stills') await evidence.applyMediaStills(parseEventData(mediaStillsData, message.value));
      // Public copies made again after an administrator changed an item's faces.
      else if (type === 'media.blurred') await evidence.applyBlurred(parseEventData(mediaBlurredData, message.value));
      else if (type === 'media.ready' || type === 'media.failed')
        await evidence.applyMediaResult(parseEventData(mediaProcessedData, message.value));
    },
  });
}
