#!/usr/bin/env node
// Tracing first, before anything loads node:http (on when OTEL_EXPORTER_OTLP_ENDPOINT is set).
import { startTracing } from '@portal/platform/tracing';
startTracing('portal');
import { createLogger, onShutdownSignal } from '@portal/platform';
import { startAllInOne } from './all-in-one.js';

const logger = createLogger({ service: 'portal' });
try {
  const portal = await startAllInOne(process.env);
  onShutdownSignal(logger, [() => portal.stop()]);
} catch (error) {
  logger.fatal({ err: error }, (error as Error).message);
  process.exitCode = 1;
}
