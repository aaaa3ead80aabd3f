import { parseArgs } from 'node:util';
import { adminUserUpdateSchema, registerRequestSchema } from '@portal/contracts';
import {
  HttpError,
  createBlobStore,
  createLogger,
  infrastructureFromEnv,
  loadOrCreateInternalSecret,
  parseInput,
  runDeadLetterCommand,
} from '@portal/platform';
import { buildUserService, openIdentityStores } from '../service.js';

const USAGE = `Create or promote a portal administrator; see and replay dead letters.

  npm run admin -- create --username NAME --email EMAIL [--full-name NAME] [--phone DIGITS]
      The password comes from the ADMIN_PASSWORD environment variable (or --password).
  npm run admin -- promote --user NAME_OR_EMAIL
      Makes an existing account an administrator.
  npm run admin -- dead-letters list|replay ...
      Events a consumer could not handle (npm run admin -- dead-letters --help).

Works on the stores the environment names (MONGO_URL and REDIS_URL, or DATA_DIR, default ./data),
with or without the portal running.`;

/**
 * The ops command behind `npm run admin`: creates or promotes an administrator directly in the
 * identity store, or (dead-letters) lists and replays the bus's dead letters. Answers the exit
 * code; prints through the given function.
 */
export async function runAdminCommand(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  if (args[0] === 'dead-letters') return runDeadLetterCommand(args.slice(1), env, print);
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      username: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'full-name': { type: 'string' },
      phone: { type: 'string' },
      user: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || (command !== 'create' && command !== 'promote')) {
    print(USAGE);
    return values.help ? 0 : 2;
  }
  const infrastructure = infrastructureFromEnv(env);
  const dataDir = infrastructure.dataDir;
  const logger = createLogger({ service: 'admin-cli', level: 'warn' });
  const stores = await openIdentityStores(infrastructure);
  // The running portal's outbox relay publishes the events this command commits.
  const { users } = buildUserService({
    stores,
    blobs: createBlobStore(infrastructure),
    logger,
    sessionIdleDays: 14,
    secret: loadOrCreateInternalSecret(dataDir, env),
    onEventsCommitted: () => undefined,
  });
  try {
    if (command === 'promote') {
      if (!values.user) throw new Error('promote needs --user NAME_OR_EMAIL');
      const outcome = await users.promoteToAdmin(values.user);
      print(outcome === 'promoted' ? `${values.user} is now an administrator.` : `${values.user} was already an administrator.`);
      return 0;
    }
    const admin = {
      username: values.username ?? '',
      email: values.email ?? '',
      password: values.password ?? env.ADMIN_PASSWORD ?? '',
      full_name: values['full-name'],
      phone_number: values.phone,
    };
    parseInput(registerRequestSchema.pick({ username: true, email: true, password: true }), admin);
    parseInput(adminUserUpdateSchema.pick({ username: true, email: true }), admin);
    const outcome = await users.ensureAdmin(admin);
    print(
      outcome === 'created'
        ? `Administrator ${admin.username} created.`
        : `An account named ${admin.username} or with ${admin.email} already exists; use: npm run admin -- promote --user ${admin.username}`,
    );
    return outcome === 'created' ? 0 : 1;
  } catch (error) {
    print(error instanceof HttpError || error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    await stores.close();
  }
}
