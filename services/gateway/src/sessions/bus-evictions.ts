import { TOPICS, eventEnvelopeSchema, sessionEventSchema, userEventSchema } from '@portal/contracts';
import type { BusMessage } from '@portal/platform';
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
    const session = sessionEventSchema.safeParse(message.value);
    if (session.success) {
      const { userId, sessionIds } = session.data.data;
      if (sessionIds) resolver.evictSessions(sessionIds);
      else resolver.evictUser(userId);
      return;
    }
    const user = userEventSchema.safeParse(message.value);
    if (
      user.success &&
      (user.data.type === 'user.deleted' || user.data.type === 'user.updated' || user.data.type === 'user.video-watched')
    ) {
      resolver.evictUser(user.data.data.userId);
    }
  };
}
