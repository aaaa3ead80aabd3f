export { createGateway, type Gateway, type GatewayDeps } from './http/server.js';
export { gatewaySettingsFromEnv, publicConfigFromEnv, type GatewaySettings } from './config.js';
