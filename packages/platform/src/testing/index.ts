export * from './wait-for.js';
export * from './event-bus-contract.js';
export * from './blob-store-contract.js';
export * from './blob-intents-contract.js';
export * from './job-queue-contract.js';
export * from './child-process.js';
export * from './mailer-contract.js';
export * from './smtp-catcher.js';
