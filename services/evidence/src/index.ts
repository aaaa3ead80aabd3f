export { createEvidenceService, type EvidenceServiceHandle, type EvidenceRuntime } from './service.js';
export { evidenceSettingsFromEnv, jobsDatabaseFile, type EvidenceSettings } from './config.js';
