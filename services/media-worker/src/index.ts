export { createMediaWorker, type MediaWorkerHandle, type MediaWorkerRuntime } from './service.js';
export { mediaWorkerSettingsFromEnv, type MediaWorkerSettings } from './config.js';
