// Imported first by main.ts, so that tracing is set up before anything loads node:http.
import { startTracing } from '@portal/platform/tracing';

export const tracing = startTracing('gateway');
