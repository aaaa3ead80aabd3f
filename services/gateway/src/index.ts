export { createGateway, type Gateway, type GatewayDeps } from './service.js';
export { gatewaySettingsFromEnv, publicConfigFromEnv, type GatewaySettings } from './config.js';
export { GATEWAY_ROUTES, ROUTE_RULES, countsAsUpload, ruleOf, type GatewayRoute, type RouteRule } from './routes/route-table.js';
