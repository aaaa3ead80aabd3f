import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewaySettingsFromEnv } from '@portal/gateway';
import { startTestPortal, type TestPortal } from '../support/portal.js';

// The address every limit counts is the one the trusted proxy saw, never one the client wrote in
// X-Forwarded-For. Here the test is both the client and the proxy in front of the gateway: the
// proxy appends the address it saw (REAL) to whatever X-Forwarded-For the client sent.

const LIMIT = 5;
const REAL = '198.51.100.7';
let portals: Record<'off' | 'true' | 'hops' | 'networks', TestPortal>;

beforeAll(async () => {
  const limited = { RATE_LIMIT_PER_MINUTE: String(LIMIT) };
  const [off, on, hops, networks] = await Promise.all([
    startTestPortal({ ...limited, TRUST_PROXY: 'false' }),
    startTestPortal({ ...limited, TRUST_PROXY: 'true' }),
    startTestPortal({ ...limited, TRUST_PROXY: '1' }),
    startTestPortal({ ...limited, TRUST_PROXY: '127.0.0.0/8, ::1/128' }),
  ]);
  portals = { off: off, true: on, hops: hops, networks: networks };
}, 60_000);
afterAll(async () => {
  await Promise.all(Object.values(portals ?? {}).map((portal) => portal.dispose()));
});

/** LIMIT + 1 requests, each with a new made-up address in front of the one the proxy saw. */
async function statusesWithForgedAddresses(portal: TestPortal, viaProxy: boolean): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i <= LIMIT; i++) {
    const forged = `203.0.113.${i + 1}`;
    const response = await fetch(`${portal.url}/api/config`, { headers: { 'x-forwarded-for': viaProxy ? `${forged}, ${REAL}` : forged } });
    statuses.push(response.status);
    await response.arrayBuffer();
  }
  return statuses;
}

describe('TRUST_PROXY', () => {
  for (const setting of ['true', 'hops', 'networks'] as const) {
    it(`(${setting === 'hops' ? '1' : setting === 'networks' ? 'a list of networks' : 'true'}) counts the address the proxy saw: a client-sent X-Forwarded-For moves no limit`, async () => {
      const statuses = await statusesWithForgedAddresses(portals[setting], true);
      expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
      expect(statuses[LIMIT]).toBe(429);
    });
  }

  it('(false) ignores X-Forwarded-For altogether', async () => {
    const statuses = await statusesWithForgedAddresses(portals.off, false);
    expect(statuses[LIMIT]).toBe(429);
  });

  it('reads false, true (one hop), a hop count or networks, and refuses anything else with a clear message', () => {
    const read = (value: string) => gatewaySettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(32), TRUST_PROXY: value }).trustProxy;
    expect(read('false')).toBe(false);
    expect(read('0')).toBe(false);
    expect(read('true')).toBe(1);
    expect(read('2')).toBe(2);
    expect(read('10.0.0.0/8, fd00::/8,loopback')).toEqual(['10.0.0.0/8', 'fd00::/8', 'loopback']);
    expect(() => read('everyone')).toThrow(/TRUST_PROXY.*10\.0\.0\.0\/8/s);
  });
});
