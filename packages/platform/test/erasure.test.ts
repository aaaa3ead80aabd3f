import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createEvent, openDatabase, OutboxMailer, scrubWal, SqliteEventBus } from '../src/index.js';
import { waitFor } from '../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'portal-erasure-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const silent = pino({ level: 'silent' });
const SECRET = 'person-7f3a9c@example.org';

describe('SQLite files forget deleted rows', () => {
  it('overwrites a deleted row in the file and empties the write-ahead log', () => {
    const file = join(root, 'forget.sqlite');
    const db = openDatabase(file, ['CREATE TABLE people (id INTEGER PRIMARY KEY, email TEXT NOT NULL)']);
    const insert = db.prepare('INSERT INTO people (email) VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run(i === 100 ? SECRET : `someone-${i}@example.org`);
    db.prepare('DELETE FROM people WHERE email = ?').run(SECRET);
    // The row is gone from the table, but the log still holds the page as it was when inserted.
    expect(readFileSync(`${file}-wal`).includes(SECRET)).toBe(true);
    expect(scrubWal(db)).toBe(true);
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(readFileSync(file).includes(SECRET)).toBe(false);
    expect((db.prepare('SELECT COUNT(*) AS n FROM people').get() as { n: number }).n).toBe(199);
    db.close();
  });
});

describe('the embedded bus keeps only what a consumer still needs', () => {
  const event = (data: unknown) => createEvent({ type: 'test.happened', key: 'k', data });
  const count = (bus: SqliteEventBus, topic: string) => bus.lag('nobody', [topic]).then((lag) => lag[topic]!);

  it('deletes a message once every group of its topic handled it, and not before', async () => {
    const bus = new SqliteEventBus({ file: join(root, 'bus-1.sqlite'), logger: silent, pollIntervalMs: 20, pruneAfterMs: 0 });
    let slowMayGo = false;
    const seen: string[] = [];
    const fast = await bus.subscribe({ groupId: 'fast', topics: ['people'], handler: async () => void seen.push('fast') });
    const slow = await bus.subscribe({
      groupId: 'slow',
      topics: ['people'],
      retryDelayMs: 20,
      maxAttempts: 1000,
      handler: async () => {
        if (!slowMayGo) throw new Error('not yet');
        seen.push('slow');
      },
    });
    await bus.publish('people', [{ key: 'k', value: event({ email: SECRET }) }]);
    await waitFor(() => seen.includes('fast'), { what: 'the fast group' });
    bus.prune();
    expect(await count(bus, 'people')).toBe(1); // the slow group has not handled it yet
    slowMayGo = true;
    await waitFor(() => seen.includes('slow'), { what: 'the slow group' });
    await waitFor(
      async () => {
        bus.prune();
        return (await count(bus, 'people')) === 0;
      },
      { what: 'the message to go' },
    );
    await fast.close();
    await slow.close();
    await bus.close();
  });

  it('keeps a message for the grace period, drops those of a topic nobody reads after it, keeps dead letters', async () => {
    const bus = new SqliteEventBus({ file: join(root, 'bus-2.sqlite'), logger: silent, pruneAfterMs: 300 });
    await bus.publish('unread', [{ key: 'k', value: event({ n: 1 }) }]);
    await bus.publish('unread.dead-letter', [{ key: 'k', value: event({ n: 2 }) }]);
    bus.prune();
    expect(await count(bus, 'unread')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 350));
    bus.prune();
    expect(await count(bus, 'unread')).toBe(0);
    expect(await count(bus, 'unread.dead-letter')).toBe(1);
    await bus.close();
  });
});

describe('the outbox mailer', () => {
  it("forgets an account's messages, and only theirs", async () => {
    const directory = join(root, 'outbox');
    const mailer = new OutboxMailer(directory, 'Portal <no-reply@portal.test>', silent);
    const message = { subject: 'Hello', text: 'Hi', html: '<p>Hi</p>' };
    await mailer.send({ ...message, to: SECRET, recipientId: '11111111-1111-4111-8111-111111111111' });
    await mailer.send({ ...message, to: SECRET, recipientId: '11111111-1111-4111-8111-111111111111', messageId: 'second@portal.invalid' });
    await mailer.send({ ...message, to: 'other@example.org', recipientId: '22222222-2222-4222-8222-222222222222' });
    expect(await mailer.forget('11111111-1111-4111-8111-111111111111')).toBe(2);
    const left = readdirSync(directory);
    expect(left).toHaveLength(1);
    expect(readFileSync(join(directory, left[0]!), 'utf8')).toContain('other@example.org');
    expect(await mailer.forget('')).toBe(0);
    await mailer.close();
  });
});
