import fp from 'fastify-plugin';
import { Pool } from 'undici';
import { runReadinessChecks, type HealthCheck, type ServiceMetrics } from '@portal/platform';
import { routeAt } from '../../routes/route-table.js';

export interface HealthOptions {
  /** The services whose health the gateway reports (name: base URL). */
  services: Record<string, string>;
  /** Where the dependencies' state is kept as a metric (a degraded dependency), when metrics are kept. */
  metrics?: ServiceMetrics;
  /** More readiness checks (the bus subscription's state). */
  checks?: HealthCheck[];
}

/**
 * /healthz (the process answers) and /readyz. Ready while this gateway serves: the web app and
 * the cached public archive need neither identity nor evidence, so their slowness is reported
 * ("degraded"), not made a 503 for all. The probes' connections close with the gateway.
 */
export const health = fp<HealthOptions>(
  async (app, { services, metrics, checks = [] }) => {
    const pools = Object.entries(services).map(([name, url]) => ({ name, pool: new Pool(url, { connections: 1 }) }));
    const readiness = pools.map(({ name, pool }) => ({
      name,
      check: async () => {
        const response = await pool.request({ method: 'GET', path: '/healthz', headersTimeout: 2000, bodyTimeout: 2000 });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`);
      },
    }));
    metrics?.watchDependencies(readiness);
    app.get('/healthz', { config: { gatewayRoute: routeAt('/healthz') } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { config: { gatewayRoute: routeAt('/readyz') } }, async (_request, reply) => {
      const { ready, body } = await runReadinessChecks([...readiness, ...checks]);
      return reply.status(ready ? 200 : 503).send(body);
    });
    app.addHook('onClose', async () => {
      await Promise.all(pools.map(({ pool }) => pool.close()));
    });
  },
  { name: 'health' },
);
