export { createMediaWorker, type MediaWorkerHandle, type MediaWorkerRuntime } from './service.js';
export { mediaWorkerSettingsFromEnv, type MediaWorkerSettings } from './config.js';
export { mediaQueuePlan, workMediaQueues, type MediaQueueWorkOptions } from './media-queue-workers.js';
