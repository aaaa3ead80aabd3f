import { parseArgs } from 'node:util';
import { TOPICS } from '@portal/contracts';
import { createLogger } from '../logging/logger.js';
import { infrastructureFromEnv } from '../runtime/infrastructure.js';
import { describeDeadLetterValue, openDeadLetters, type DeadLetter, type DeadLetterStore } from '../events/dead-letters.js';

export const DEAD_LETTERS_USAGE = `See and replay dead letters: events a consumer could not handle (poison, or failing for
no recognised reason), kept in <topic>.dead-letter (DEAD_LETTER_RETENTION_MS, 14 days).

  npm run admin -- dead-letters list [--topic TOPIC] [--since TIME] [--group GROUP] [--json]
      Lists them, oldest first: when, which group, why, the event, whether it was replayed.
  npm run admin -- dead-letters replay --topic TOPIC --since TIME [--group GROUP] [--again] [--dry-run]
      Writes each back to its topic for the group it was for alone (the other groups handled it
      and skip it), and notes it as replayed: a second replay skips it unless --again.

TOPIC is a topic's plain name (${Object.values(TOPICS).join(', ')});
TIME an ISO date-time (2026-07-01T18:00Z) or an age (30m, 6h, 2d). Works on the bus the
environment names (KAFKA_BROKERS and DEPLOYMENT_NAMESPACE, or DATA_DIR's embedded log), with or
without the portal running. Mend the cause first (a release, a schema): a replayed poison
message comes back to the dead letters.`;

/** "2026-07-01T18:00Z" or an age ("90m", "6h", "2d") as ms since the epoch; null when neither. */
export function parseSince(value: string, now = Date.now()): number | null {
  const age = /^(\d+)(m|h|d)$/.exec(value.trim());
  if (age) return now - Number(age[1]) * { m: 60_000, h: 3600_000, d: 86_400_000 }[age[2] as 'm' | 'h' | 'd'];
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

function line(letter: DeadLetter): string {
  return [
    new Date(letter.at).toISOString(),
    letter.topic,
    letter.id,
    `group=${letter.group}`,
    `kind=${letter.kind}`,
    `key=${letter.key}`,
    describeDeadLetterValue(letter),
    `error=${JSON.stringify(letter.error)}`,
    letter.replayedAt ? `replayed=${new Date(letter.replayedAt).toISOString()}` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

/**
 * `npm run admin -- dead-letters ...` (also `node services/identity/dist/cli/admin.js dead-letters ...`
 * in a pod). Answers the exit code; prints through the given function.
 */
export async function runDeadLetterCommand(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  print: (line: string) => void = (text) => console.log(text),
  open: (env: NodeJS.ProcessEnv) => DeadLetterStore = (given) =>
    openDeadLetters(infrastructureFromEnv(given), createLogger({ service: 'dead-letters', level: 'warn' })),
): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      topic: { type: 'string' },
      since: { type: 'string' },
      group: { type: 'string' },
      again: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || (command !== 'list' && command !== 'replay')) {
    print(DEAD_LETTERS_USAGE);
    return values.help ? 0 : 2;
  }
  const known = Object.values(TOPICS) as string[];
  if (values.topic !== undefined && !known.includes(values.topic)) {
    print(`--topic must be one of: ${known.join(', ')} (not ${values.topic})`);
    return 2;
  }
  if (command === 'replay' && (values.topic === undefined || values.since === undefined)) {
    print('replay needs --topic TOPIC and --since TIME: say which dead letters to write back');
    return 2;
  }
  const since = values.since === undefined ? 0 : parseSince(values.since);
  if (since === null) {
    print(`--since must be an ISO date-time (2026-07-01T18:00Z) or an age (30m, 6h, 2d), not ${values.since}`);
    return 2;
  }
  const store = open(env);
  try {
    const topics = values.topic ? [values.topic] : known;
    const letters: DeadLetter[] = [];
    for (const topic of topics) letters.push(...(await store.list(topic, since)));
    const chosen = letters.filter((letter) => values.group === undefined || letter.group === values.group);
    if (command === 'list') {
      for (const letter of chosen) print(values.json ? JSON.stringify(letter) : line(letter));
      if (!values.json) print(`${chosen.length} dead letter${chosen.length === 1 ? '' : 's'}`);
      return 0;
    }
    let replayed = 0;
    let skipped = 0;
    for (const letter of chosen) {
      if (letter.replayedAt !== null && !values.again) {
        skipped++;
        print(
          `skipped ${letter.id} (${describeDeadLetterValue(letter)}): replayed at ${new Date(letter.replayedAt).toISOString()}; --again replays it anyway`,
        );
        continue;
      }
      if (!values['dry-run']) await store.replay(letter);
      replayed++;
      print(
        `${values['dry-run'] ? 'would replay' : 'replayed'} ${letter.id} to ${letter.topic} for ${letter.group}: ${describeDeadLetterValue(letter)}`,
      );
    }
    print(`${replayed} ${values['dry-run'] ? 'to replay' : 'replayed'}, ${skipped} already replayed`);
    return 0;
  } catch (error) {
    print(error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    await store.close();
  }
}
