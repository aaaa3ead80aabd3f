import { TOPICS, eventEnvelopeSchema, sessionsRevokedData, userDeletedData } from '@portal/contracts';
import { parseEventData, type BusMessage } from '@portal/platform';
import type { PublicCache } from '../http/public-cache.js';
import type { SessionResolver } from './session-resolver.js';

/** The topics a gateway listens to: sessions and users always; evidence and media too when it keeps public answers. */
export function evictionTopics(withPublicCache: boolean): string[] {
  return withPublicCache ? [TOPICS.sessions, TOPICS.users, TOPICS.evidence, TOPICS.media] : [TOPICS.sessions, TOPICS.users];
}

/**
 * What a gateway forgets when the bus says something changed elsewhere (another gateway's logout,
 * an administrator's block, a rename, a new public item): the cached sessions it names, and the
 * public answers it may have changed.
 */
export function evictOnEvent(resolver: SessionResolver, publicCache: PublicCache | null): (message: BusMessage) => Promise<void> {
  return async (message) => {
    if (publicCache && message.topic !== TOPICS.sessions) {
      const type = eventEnvelopeSchema.safeParse(message.value).data?.type;
      // Evidence announces its own changes once made. A media result and a renamed or
      // deleted user reach the archive through evidence's consumers, a moment later.
      if (message.topic === TOPICS.evidence) publicCache.clear();
      else if (message.topic === TOPICS.media || type === 'user.updated' || type === 'user.deleted') publicCache.clear({ settle: true });
    }
    if (message.topic === TOPICS.evidence || message.topic === TOPICS.media) return;
    const { type } = message.value;
    if (type === 'sessions.revoked') {
      const { userId, sessionIds } = parseEventData(sessionsRevokedData, message.value);
      if (sessionIds) resolver.evictSessions(sessionIds);
      else resolver.evictUser(userId);
      return;
    }
    // user.updated, user.deleted and user.video-watched all name the user in data.userId.
    if (type === 'user.deleted' || type === 'user.updated' || type === 'user.video-watched') {
      resolver.evictUser(parseEventData(userDeletedData, message.value).userId);
    }
  };
}
