import { randomUUID } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import type { Mailer } from '../mail/mailer.js';
import { waitFor } from './wait-for.js';

export interface MailerContractOptions {
  create: () => Promise<Mailer>;
  /** The raw RFC 822 messages the adapter delivered so far. */
  delivered: () => Promise<Buffer[]>;
  /** The sender the adapter was configured with. */
  from: string;
}

/** The one contract every mailer adapter must pass. */
export function mailerContract(name: string, options: MailerContractOptions): void {
  describe(`Mailer contract: ${name}`, () => {
    it('delivers a message with text and HTML parts, the sender, and the given Message-ID', async () => {
      const mailer = await options.create();
      const id = `${randomUUID()}@portal.test`;
      const sent = await mailer.send({
        to: 'informant@example.org',
        subject: 'Your code: 123456 — Operation Ünïcode',
        text: 'Your code is 123456.\nIt is valid for 15 minutes.',
        html: '<p>Your code is <strong>123456</strong>.</p>',
        messageId: id,
      });
      expect(sent.messageId).toBe(id);
      const message = await waitFor(
        async () => {
          for (const raw of await options.delivered()) {
            const parsed = await simpleParser(raw);
            if (parsed.messageId === `<${id}>`) return parsed;
          }
          return null;
        },
        { what: 'the delivered message' },
      );
      expect(message.subject).toBe('Your code: 123456 — Operation Ünïcode');
      expect(message.text?.trim()).toBe('Your code is 123456.\nIt is valid for 15 minutes.');
      expect(message.html).toContain('<strong>123456</strong>');
      expect(message.from?.text).toContain(options.from.replace(/.*<|>.*/g, ''));
      expect(JSON.stringify(message.to)).toContain('informant@example.org');
      await mailer.close();
    });

    it('answers ping', async () => {
      const mailer = await options.create();
      await expect(mailer.ping()).resolves.toBeUndefined();
      await mailer.close();
    });
  });
}
