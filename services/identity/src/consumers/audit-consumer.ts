import { TOPICS, auditRecordedData, userEventSchema } from '@portal/contracts';
import type { EventBus, Logger, Subscription } from '@portal/platform';
import type { AuditTrail } from '../domain/audit-trail.js';

/**
 * The audit log's intake: every service's `audit.recorded` events, and identity's own
 * `user.deleted` (the erasure of that person's identifiers from the log). Both are idempotent.
 */
/** The audit log's consumer group and its topics (its lag is reported under this group). */
export const AUDIT_CONSUMER = { groupId: 'identity.audit', topics: [TOPICS.audit, TOPICS.users] };

export async function subscribeAuditConsumer(bus: EventBus, trail: AuditTrail, logger: Logger): Promise<Subscription> {
  return bus.subscribe({
    ...AUDIT_CONSUMER,
    handler: async (message) => {
      if (message.topic === TOPICS.users) {
        const parsed = userEventSchema.safeParse(message.value);
        if (parsed.success && parsed.data.type === 'user.deleted') await trail.erasePerson(parsed.data.data.userId);
        return;
      }
      if (message.value.type !== 'audit.recorded') return;
      const data = auditRecordedData.safeParse(message.value.data);
      if (!data.success) {
        logger.warn({ eventId: message.value.id }, 'ignored a malformed audit entry');
        return;
      }
      await trail.record({ ...message.value, data: data.data });
    },
  });
}
