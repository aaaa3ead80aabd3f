import { TOPICS, isAdminRole, type ModerationDigestRequestedData } from '@portal/contracts';
import { createEvent, type Logger } from '@portal/platform';
import type { EvidenceSource } from '../clients/evidence-client.js';
import type { ScheduleStore } from '../repositories/schedule-store.js';
import type { PendingEvent, UserRepository } from '../repositories/user-repository.js';

export interface ModerationDigestDeps {
  users: UserRepository;
  schedule: ScheduleStore;
  evidence: Pick<EvidenceSource, 'postedSince'>;
  logger: Logger;
  /** MODERATION_DIGEST_MINUTES in ms (> 0). */
  everyMs: number;
  onEventsCommitted: () => void;
  clock?: () => number;
}

const RUN = 'moderation-digest';

/**
 * The moderator digest: once per period at most (whichever replica claims the run), if items came
 * into the review queue since the previous run (posted, or sent back by their owner's edit, and
 * still waiting for review), every administrator gets an e-mail with the counts by kind and
 * a link to the queue (a `moderation-digest.requested` event each, which the notifier sends).
 * Nothing new, no e-mail.
 */
export class ModerationDigest {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: ModerationDigestDeps) {}

  /** Checks a few times per period, so a run is never much later than due. */
  start(): void {
    const checkEveryMs = Math.min(60_000, Math.max(1000, Math.floor(this.deps.everyMs / 4)));
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error }, 'moderator digest failed; the next run counts from the previous one'),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, checkEveryMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One check: answers how many administrators were told (0 when not due or nothing is new). */
  async tick(): Promise<number> {
    const now = new Date((this.deps.clock ?? Date.now)());
    const claimed = await this.deps.schedule.claim(RUN, now, this.deps.everyMs);
    if (!claimed) return 0;
    const counts = await this.deps.evidence.postedSince(claimed.previous);
    const total = counts.notes + counts.photos + counts.videos + counts.audio;
    if (total === 0) return 0;
    const events: PendingEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.deps.users.list(500, cursor);
      for (const user of page.items) {
        if (!isAdminRole(user.role)) continue;
        const data: ModerationDigestRequestedData = {
          userId: user.id,
          email: user.email,
          full_name: user.full_name,
          counts,
          since: claimed.previous,
          until: now.toISOString(),
        };
        events.push({ topic: TOPICS.moderation, event: createEvent({ type: 'moderation-digest.requested', key: user.id, data }) });
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    if (events.length === 0) return 0;
    await this.deps.users.appendEvents(events);
    this.deps.onEventsCommitted();
    this.deps.logger.info({ items: total, administrators: events.length }, 'moderator digest due');
    return events.length;
  }
}
