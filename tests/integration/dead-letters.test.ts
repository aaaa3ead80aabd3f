import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS, type AuditEntry } from '@portal/contracts';
import { DEAD_LETTER_HEADERS, SqliteEventBus, auditEvent, deadLetterTopic, type DeadLetter } from '@portal/platform';
import { waitFor } from '@portal/platform/testing';
import { runAdminCommand } from '@portal/identity';
import { adminClient } from '../support/accounts.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

// The all-in-one mode keeps its dead letters in the embedded bus's log (DATA_DIR/bus.sqlite, topics
// <topic>.dead-letter, DEAD_LETTER_RETENTION_MS): `npm run admin -- dead-letters` lists and replays
// them there, while the portal runs. The test writes to that log as another process would (a second
// connection to the same SQLite file).
let portal: TestPortal;
let log: SqliteEventBus;
beforeAll(async () => {
  portal = await startTestPortal();
  log = new SqliteEventBus({ file: join(portal.dataDir, 'bus.sqlite'), logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await log?.close();
  await portal?.dispose();
});

async function admin(args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runAdminCommand(['dead-letters', ...args], { DATA_DIR: portal.dataDir }, (line) => lines.push(line));
  return { code, lines };
}

describe('dead letters of the embedded bus, and the command', () => {
  it('a message that is no event becomes a dead letter of every group that reads its topic, listed with why', async () => {
    log.publishRaw(TOPICS.users, [{ key: 'someone', value: '{"type": "user.deleted", "data": ', headers: {} }]);
    const letters = await waitFor(
      async () => {
        const { lines } = await admin(['list', '--topic', TOPICS.users, '--json']);
        const parsed = lines.map((line) => JSON.parse(line) as DeadLetter);
        return parsed.length >= 3 ? parsed : null;
      },
      { what: "the groups' dead letters" },
    );
    expect(letters.map((letter) => letter.group)).toEqual(expect.arrayContaining(['evidence', 'notifier', 'identity.audit']));
    for (const letter of letters)
      expect(letter).toMatchObject({ kind: 'poison', key: 'someone', value: '{"type": "user.deleted", "data": ' });
    const { code, lines } = await admin(['list', '--topic', TOPICS.users]);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/identity\.users .*kind=poison .*\(the message is not JSON\)/);
    expect(lines.at(-1)).toBe(`${letters.length} dead letters`);
  });

  it('replays a dead letter to its topic for its group alone, once: an audit entry lost to a bug is in the log after', async () => {
    // As a release with a bug left it: an audit entry the identity.audit group could not store.
    const { event } = auditEvent({
      actor: 'ops-command',
      action: 'evidence.publish',
      target: { type: 'evidence', id: 'replayed-target', label: 'Seen at the corner' },
    });
    log.publishRaw(deadLetterTopic(TOPICS.audit), [
      {
        key: event.key,
        value: JSON.stringify(event),
        headers: {
          [DEAD_LETTER_HEADERS.group]: 'identity.audit',
          [DEAD_LETTER_HEADERS.kind]: 'failed',
          [DEAD_LETTER_HEADERS.error]: "Cannot read properties of undefined (reading 'id')",
          [DEAD_LETTER_HEADERS.topic]: TOPICS.audit,
        },
      },
    ]);
    expect((await admin(['replay', '--topic', TOPICS.audit])).code).toBe(2);
    const dry = await admin(['replay', '--topic', TOPICS.audit, '--since', '1h', '--dry-run']);
    expect(dry.lines.at(-1)).toBe('1 to replay, 0 already replayed');
    const replay = await admin(['replay', '--topic', TOPICS.audit, '--since', '1h']);
    expect(replay.code).toBe(0);
    expect(replay.lines[0]).toMatch(new RegExp(`^replayed \\d+ to audit.entries for identity.audit: audit.recorded ${event.id}$`));

    const { client } = await adminClient(portal.url);
    const entries = await waitFor(
      async () => {
        const found = (await client.get('/api/admin/activity?target=replayed-target')).data as AuditEntry[];
        return found.length > 0 ? found : null;
      },
      { what: 'the replayed audit entry' },
    );
    expect(entries.map((entry) => [entry.id, entry.action])).toEqual([[event.id, 'evidence.publish']]);

    // Replayed once: a second run skips it (unless --again), and the list says when it was replayed.
    const again = await admin(['replay', '--topic', TOPICS.audit, '--since', '1h']);
    expect(again.lines.at(-1)).toBe('0 replayed, 1 already replayed');
    expect((await admin(['list', '--topic', TOPICS.audit])).lines[0]).toMatch(/group=identity\.audit .*replayed=\d{4}-/);
    // A replay to the same group again (--again) changes nothing in the log: the entry is there once.
    expect((await admin(['replay', '--topic', TOPICS.audit, '--since', '1h', '--again'])).lines.at(-1)).toBe(
      '1 replayed, 0 already replayed',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(((await client.get('/api/admin/activity?target=replayed-target')).data as AuditEntry[]).length).toBe(1);
  });

  it('says what it needs when asked wrongly', async () => {
    expect((await admin(['list', '--topic', 'nope'])).lines[0]).toMatch(/^--topic must be one of: identity.users, /);
    expect((await admin(['list', '--since', 'yesterday'])).lines[0]).toMatch(/^--since must be an ISO date-time/);
    expect((await admin(['--help'])).code).toBe(0);
  });
});
