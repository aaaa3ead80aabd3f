#!/usr/bin/env node
// Tracing first, before anything loads node:http (on when OTEL_EXPORTER_OTLP_ENDPOINT is set).
import { startTracing } from '@portal/platform/tracing';
startTracing('portal');
import { createFilesPrivately, createLogger, onShutdownSignal } from '@portal/platform';
import { startAllInOne } from './all-in-one.js';

// Every file the portal writes under DATA_DIR is its user's alone (0600, folders 0700).
createFilesPrivately();

const logger = createLogger({ service: 'portal' });
try {
  const portal = await startAllInOne(process.env);
  onShutdownSignal(logger, [() => portal.stop()]);
} catch (error) {
  logger.fatal({ err: error }, (error as Error).message);
  process.exitCode = 1;
}
