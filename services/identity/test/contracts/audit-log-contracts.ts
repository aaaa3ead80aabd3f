import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditLogStore, StoredAuditEntry } from '../../src/repositories/audit-log-store.js';

let clock = Date.parse('2026-07-01T10:00:00.000Z');

export function sampleEntry(overrides: Partial<StoredAuditEntry> = {}): StoredAuditEntry {
  clock += 1000;
  return {
    id: randomUUID(),
    at: new Date(clock).toISOString(),
    actor_id: randomUUID(),
    actor_username: 'moderator_one',
    action: 'evidence.publish',
    target_type: 'evidence',
    target_id: randomUUID(),
    target_label: 'A cafe at night',
    subject_user_id: randomUUID(),
    before: { is_public: false },
    after: { is_public: true },
    details: null,
    erased: false,
    ...overrides,
  };
}

const served = ({ subject_user_id: _s, ...entry }: StoredAuditEntry) => entry;

/** The contract of the audit log store, for every adapter (SQLite, MongoDB). */
export function auditLogContract(name: string, create: () => Promise<AuditLogStore>): void {
  describe(`AuditLogStore contract: ${name}`, () => {
    it('stores an entry once (a second append of the same id changes nothing) and lists newest first', async () => {
      const store = await create();
      const actor = randomUUID();
      const first = sampleEntry({ actor_id: actor });
      const second = sampleEntry({ actor_id: actor, action: 'evidence.unpublish', details: { nested: { n: 1 } } });
      await store.append(first);
      await store.append(second);
      await store.append({ ...first, target_label: 'changed' });
      const page = await store.list({ actor }, 10);
      expect(page.items).toEqual([served(second), served(first)]);
      expect(page.nextCursor).toBeNull();
    });

    it('filters by actor (id or username, any case), action, target and time, and pages with cursors', async () => {
      const store = await create();
      const username = `mod_${randomUUID().slice(0, 8)}`;
      const actor = randomUUID();
      const target = randomUUID();
      const entries = [
        sampleEntry({ actor_id: actor, actor_username: username }),
        sampleEntry({ actor_id: actor, actor_username: username, target_id: target, action: 'evidence.delete' }),
        sampleEntry({ actor_id: actor, actor_username: username }),
        sampleEntry({ actor_id: actor, actor_username: username, target_id: target }),
        sampleEntry({ actor_id: actor, actor_username: username }),
      ];
      for (const entry of entries) await store.append(entry);
      expect((await store.list({ actor: username.toUpperCase() }, 50)).items.map((e) => e.id)).toEqual(entries.map((e) => e.id).reverse());
      expect((await store.list({ actor, action: 'evidence.delete' }, 50)).items.map((e) => e.id)).toEqual([entries[1]!.id]);
      expect((await store.list({ target }, 50)).items.map((e) => e.id)).toEqual([entries[3]!.id, entries[1]!.id]);
      expect((await store.list({ actor, from: entries[1]!.at, to: entries[3]!.at }, 50)).items.map((e) => e.id)).toEqual([
        entries[3]!.id,
        entries[2]!.id,
        entries[1]!.id,
      ]);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ actor }, 2, cursor);
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(entries.map((e) => e.id).reverse());
      expect(await store.list({}, 10, 'not-a-cursor')).toEqual({ items: [], nextCursor: null });
    });

    it('erasing a person removes their identifiers from entries by and about them, and keeps the entries', async () => {
      const store = await create();
      const person = randomUUID();
      const admin = randomUUID();
      const about = sampleEntry({
        actor_id: admin,
        subject_user_id: person,
        target_label: 'their title',
        before: { notes: 'their words' },
      });
      const account = sampleEntry({
        actor_id: admin,
        action: 'user.edit',
        target_type: 'user',
        target_id: person,
        target_label: 'their_username',
        subject_user_id: person,
        before: { email: 'them@example.org' },
      });
      const by = sampleEntry({ actor_id: person, actor_username: 'their_username', subject_user_id: randomUUID() });
      const unrelated = sampleEntry({ actor_id: admin });
      for (const entry of [about, account, by, unrelated]) await store.append(entry);
      expect(await store.erasePerson(person)).toBe(3);
      const byId = new Map((await store.list({}, 200)).items.map((entry) => [entry.id, entry]));
      expect(byId.get(about.id)).toEqual({ ...served(about), target_label: null, before: null, after: null, details: null, erased: true });
      expect(byId.get(account.id)).toEqual({
        ...served(account),
        target_id: null,
        target_label: null,
        before: null,
        after: null,
        erased: true,
      });
      expect(byId.get(by.id)).toEqual({ ...served(by), actor_id: null, actor_username: null, erased: true });
      expect(byId.get(unrelated.id)).toEqual(served(unrelated));
      expect((await store.list({ actor: person }, 10)).items).toEqual([]);
      expect((await store.list({ target: person }, 10)).items).toEqual([]);
      expect(await store.erasePerson(person)).toBe(0);
    });
  });
}
