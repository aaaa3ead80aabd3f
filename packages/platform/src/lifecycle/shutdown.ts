import type { Logger } from 'pino';
import { z } from 'zod';
import { parseEnv } from '../config/env.js';

export type ShutdownStep = () => Promise<void>;

/** Without SHUTDOWN_GRACE_MS: Kubernetes' default terminationGracePeriodSeconds (30 s) less 5 s. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

const shutdownEnvSchema = z.object({
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0, 'must be 0 or more (ms)').default(DEFAULT_SHUTDOWN_GRACE_MS),
});

/**
 * How long a process may take to finish its work after SIGTERM before it exits anyway:
 * SHUTDOWN_GRACE_MS, which a deployment sets a little below the time its orchestrator waits
 * (terminationGracePeriodSeconds, minus a preStop pause, minus a margin).
 */
export function shutdownGraceMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return parseEnv(shutdownEnvSchema, env).SHUTDOWN_GRACE_MS;
}

let stopping = false;

/** True from the first SIGTERM/SIGINT on: readiness answers 503 so no new work is sent here. */
export function isShuttingDown(): boolean {
  return stopping;
}

/**
 * Runs the given steps (in order) on SIGTERM or SIGINT, then exits. The steps drain in-flight
 * work (HTTP servers finish their requests, the media worker its jobs); a second signal, or steps
 * taking longer than the grace period (SHUTDOWN_GRACE_MS by default), force the exit.
 */
export function onShutdownSignal(logger: Logger, steps: ShutdownStep[], graceMs = shutdownGraceMsFromEnv()): void {
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, graceMs }, 'shutting down: finishing the work in progress');
    const force = setTimeout(() => {
      logger.error({ graceMs }, 'shutdown took longer than the grace period (SHUTDOWN_GRACE_MS): exiting');
      process.exit(1);
    }, graceMs);
    force.unref();
    (async () => {
      for (const step of steps) await step();
    })().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
