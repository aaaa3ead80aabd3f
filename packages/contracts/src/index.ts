export * from './messages.js';
export * from './errors.js';
export * from './users.js';
export * from './events.js';
export * from './public-config.js';
export * from './client-routes.js';
export * from './evidence.js';
export * from './password-reset.js';
