export * from './wait-for.js';
export * from './event-bus-contract.js';
export * from './blob-store-contract.js';
