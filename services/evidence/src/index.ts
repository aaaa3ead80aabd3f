export { createEvidenceService, type EvidenceServiceHandle, type EvidenceRuntime } from './service.js';
export { evidenceSettingsFromEnv, jobsDatabaseFile, MEDIA_QUEUE, type EvidenceSettings } from './config.js';
