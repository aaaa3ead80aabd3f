import { TOPICS, type AuditAction, type AuditRecordedData, type EventEnvelope } from '@portal/contracts';
import type { CallerIdentity } from '../http/caller-identity.js';
import { createEvent } from './envelope.js';

/** Who did it: the caller of a request, or the ops command (no account). */
export type AuditActor = Pick<CallerIdentity, 'userId' | 'username'> | 'ops-command';

export interface AuditDraft {
  actor: AuditActor;
  action: AuditAction;
  target: AuditRecordedData['target'];
  /** The participant the entry is about (target user or the item's author); null if nobody. */
  subjectUserId?: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  details?: Record<string, unknown> | null;
}

/**
 * The one way to record an administrative act: an `audit.recorded` event for topic
 * `audit.entries`, to be written with the act itself (pass it among the events of the repository
 * write that makes the change, so the transactional outbox publishes it if and only if the act is
 * committed). The identity service's audit log consumes the topic and stores the entry.
 */
export function auditEvent(draft: AuditDraft): { topic: string; event: EventEnvelope<AuditRecordedData> } {
  const data: AuditRecordedData = {
    actor:
      draft.actor === 'ops-command' ? { id: null, username: 'ops command' } : { id: draft.actor.userId, username: draft.actor.username },
    action: draft.action,
    target: draft.target,
    subjectUserId: draft.subjectUserId ?? null,
    before: draft.before ?? null,
    after: draft.after ?? null,
    details: draft.details ?? null,
  };
  // Keyed by the target, so that the entries about one item or account stay in order.
  const key = draft.target.id ?? draft.target.type;
  // The request id is the request context's (createEvent), as for every event the act makes.
  return { topic: TOPICS.audit, event: createEvent({ type: 'audit.recorded', key, data }) };
}
