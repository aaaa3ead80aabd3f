import { createHash, randomBytes } from 'node:crypto';
import type { SessionRecord, SessionStore } from '../repositories/user-repository.js';

export interface SessionPolicy {
  /** A session unused for this long ends (ms). */
  idleMs: number;
}

/** Opaque random session ids; only their SHA-256 is stored, so a copy of the store opens nothing. */
export class SessionService {
  constructor(
    private readonly store: SessionStore,
    private readonly policy: SessionPolicy,
  ) {}

  static hashId(rawId: string): string {
    return createHash('sha256').update(rawId).digest('base64url');
  }

  async start(userId: string): Promise<{ rawId: string; session: SessionRecord }> {
    const rawId = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: SessionRecord = { id: SessionService.hashId(rawId), userId, createdAt: now, expiresAt: now + this.policy.idleMs };
    await this.store.create(session);
    return { rawId, session };
  }

  /** The live session behind a cookie value, extended when it is used (at most once an hour). */
  async resolve(rawId: string): Promise<SessionRecord | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(rawId)) return null;
    const session = await this.store.find(SessionService.hashId(rawId));
    if (!session) return null;
    const now = Date.now();
    if (session.expiresAt - now < this.policy.idleMs - 3600_000) {
      session.expiresAt = now + this.policy.idleMs;
      await this.store.extend(session.id, session.expiresAt);
    }
    return session;
  }

  end(sessionId: string): Promise<boolean> {
    return this.store.delete(sessionId);
  }

  endAllFor(userId: string): Promise<string[]> {
    return this.store.deleteForUser(userId);
  }
}
