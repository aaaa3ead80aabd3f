import type { Logger } from 'pino';

export type ShutdownStep = () => Promise<void>;

/**
 * Runs the given steps (in order) on SIGTERM or SIGINT, then exits. A second signal, or a step
 * taking longer than the grace period, forces the exit.
 */
export function onShutdownSignal(logger: Logger, steps: ShutdownStep[], graceMs = 20_000): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long: exiting');
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
