export { createIdentityService, openIdentityStores, buildUserService } from './service.js';
export type { IdentityService, IdentityRuntime, IdentityStores } from './service.js';
export { identitySettingsFromEnv, adminFromEnv, type IdentitySettings } from './config.js';
export type { UserService, NewAdmin } from './domain/user-service.js';
export { runAdminCommand } from './cli/admin-command.js';
