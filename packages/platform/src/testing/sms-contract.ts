import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SmsSender } from '../sms/sms-sender.js';
import { waitFor } from './wait-for.js';

export interface SmsContractOptions {
  create: () => Promise<SmsSender>;
  /** The messages the adapter delivered so far (as the far end received them). */
  delivered: () => Promise<{ to: string; body: string }[]>;
}

/** The one contract every text-message adapter must pass. */
export function smsSenderContract(name: string, options: SmsContractOptions): void {
  describe(`SmsSender contract: ${name}`, () => {
    it('delivers the body, whole and unchanged, to the E.164 number, and answers an id', async () => {
      const sender = await options.create();
      const body = `Reminder ${randomUUID().slice(0, 8)}: today 18:30 at Main St & 1st Ave — “bring headphones”; ünïcode ok`;
      const sent = await sender.send({ to: '+12025550123', body, messageId: `test.${randomUUID()}` });
      expect(sent.providerId).toBeTruthy();
      const message = await waitFor(async () => (await options.delivered()).find((candidate) => candidate.body === body) ?? null, {
        what: 'the delivered message',
      });
      expect(message.to).toBe('+12025550123');
      await sender.close();
    });

    it('answers ping', async () => {
      const sender = await options.create();
      await expect(sender.ping()).resolves.toBeUndefined();
      await sender.close();
    });
  });
}
