import { describe, expect, it } from 'vitest';
import { PasswordHasher } from '../src/domain/passwords.js';
import { SessionService } from '../src/domain/session-service.js';
import type { SessionRecord, SessionStore } from '../src/repositories/user-repository.js';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher();

  it('hashes with argon2id at the OWASP parameters and verifies', async () => {
    const hash = await hasher.hash('correct horse');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.verify(hash, 'correct horse')).toBe(true);
    expect(await hasher.verify(hash, 'wrong horse')).toBe(false);
    expect(await hasher.verify('not a hash', 'x')).toBe(false);
    expect(await hasher.verifyNothing('anything')).toBe(false);
  });
});

/** An in-memory store, enough to test the service's own rules. */
class MemorySessions implements SessionStore {
  readonly rows = new Map<string, SessionRecord>();
  async create(session: SessionRecord) {
    this.rows.set(session.id, { ...session });
  }
  async find(id: string) {
    const row = this.rows.get(id);
    return row && row.expiresAt > Date.now() ? { ...row } : null;
  }
  async extend(id: string, expiresAt: number) {
    const row = this.rows.get(id);
    if (row) row.expiresAt = expiresAt;
  }
  async delete(id: string) {
    return this.rows.delete(id);
  }
  async deleteForUser(userId: string) {
    const ids = [...this.rows.values()].filter((row) => row.userId === userId).map((row) => row.id);
    for (const id of ids) this.rows.delete(id);
    return ids;
  }
  async ping() {}
}

describe('SessionService', () => {
  it('stores only the hash of the id it hands out', async () => {
    const store = new MemorySessions();
    const sessions = new SessionService(store, { idleMs: 3600_000 * 48 });
    const { rawId, session } = await sessions.start('user-1');
    expect(rawId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.rows.has(rawId)).toBe(false);
    expect(store.rows.has(session.id)).toBe(true);
    expect((await sessions.resolve(rawId))?.userId).toBe('user-1');
  });

  it('refuses malformed, unknown and expired ids', async () => {
    const store = new MemorySessions();
    const sessions = new SessionService(store, { idleMs: 3600_000 * 48 });
    expect(await sessions.resolve('short')).toBeNull();
    expect(await sessions.resolve('x'.repeat(43))).toBeNull();
    const { rawId, session } = await sessions.start('user-1');
    store.rows.get(session.id)!.expiresAt = Date.now() - 1;
    expect(await sessions.resolve(rawId)).toBeNull();
  });

  it('extends a session that is used, at most once an hour', async () => {
    const store = new MemorySessions();
    const idleMs = 3600_000 * 48;
    const sessions = new SessionService(store, { idleMs });
    const { rawId, session } = await sessions.start('user-1');
    const fresh = store.rows.get(session.id)!.expiresAt;
    await sessions.resolve(rawId);
    expect(store.rows.get(session.id)!.expiresAt).toBe(fresh);
    store.rows.get(session.id)!.expiresAt = Date.now() + idleMs - 2 * 3600_000;
    await sessions.resolve(rawId);
    expect(store.rows.get(session.id)!.expiresAt).toBeGreaterThan(Date.now() + idleMs - 60_000);
  });

  it('ends every session of a user', async () => {
    const store = new MemorySessions();
    const sessions = new SessionService(store, { idleMs: 3600_000 });
    const a = await sessions.start('user-1');
    await sessions.start('user-1');
    const other = await sessions.start('user-2');
    expect((await sessions.endAllFor('user-1')).length).toBe(2);
    expect(await sessions.resolve(a.rawId)).toBeNull();
    expect(await sessions.resolve(other.rawId)).not.toBeNull();
  });
});
