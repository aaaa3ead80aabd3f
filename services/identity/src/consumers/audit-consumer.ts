import { TOPICS, auditRecordedData, userDeletedData } from '@portal/contracts';
import { parseEventData, type EventBus, type HealthCheck, type Subscription } from '@portal/platform';
import type { AuditTrail } from '../domain/audit-trail.js';

/** The audit log's consumer group and its topics (its lag is reported under this group). */
export const AUDIT_CONSUMER = { groupId: 'identity.audit', topics: [TOPICS.audit, TOPICS.users] };

/**
 * The audit log's intake: every service's `audit.recorded` events, and identity's own
 * `user.deleted` (the erasure of that person's identifiers from the log). Both are idempotent.
 * While the audit store is away the consumer holds its messages (the bus's policy); an entry that
 * breaks its schema is a dead letter.
 */
export async function subscribeAuditConsumer(
  bus: EventBus,
  trail: AuditTrail,
  options: { dependencies: HealthCheck[]; signal?: AbortSignal },
): Promise<Subscription> {
  return bus.subscribe({
    ...AUDIT_CONSUMER,
    dependencies: options.dependencies,
    ...(options.signal ? { signal: options.signal } : {}),
    handler: async (message) => {
      if (message.topic === TOPICS.users) {
        if (message.value.type === 'user.deleted') await trail.erasePerson(parseEventData(userDeletedData, message.value).userId);
        return;
      }
      if (message.value.type !== 'audit.recorded') return;
      await trail.record({ ...message.value, data: parseEventData(auditRecordedData, message.value) });
    },
  });
}
