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
  /** The SMTP envelope's recipients of each message delivered so far, where the adapter has an envelope. */
  envelopes?: () => Promise<string[][]>;
}

/** An address with its local part's quotes removed: '"a,b"@example.org' is 'a,b@example.org'. */
const unquoted = (address: string) =>
  address.replace(/^"((?:[^"\\]|\\.)*)"@/, (_match, local: string) => `${local.replace(/\\(.)/g, '$1')}@`);

/** The delivered message with this Message-ID, parsed, once it has arrived. */
function deliveredMessage(options: MailerContractOptions, id: string) {
  return waitFor(
    async () => {
      for (const raw of await options.delivered()) {
        const parsed = await simpleParser(raw);
        if (parsed.messageId === `<${id}>`) return parsed;
      }
      return null;
    },
    { what: 'the delivered message' },
  );
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
      const message = await deliveredMessage(options, id);
      expect(message.subject).toBe('Your code: 123456 — Operation Ünïcode');
      expect(message.text?.trim()).toBe('Your code is 123456.\nIt is valid for 15 minutes.');
      expect(message.html).toContain('<strong>123456</strong>');
      expect(message.from?.text).toContain(options.from.replace(/.*<|>.*/g, ''));
      expect(JSON.stringify(message.to)).toContain('informant@example.org');
      await mailer.close();
    });

    it('hands the message to exactly the address it is given, which no comma or bracket turns into more', async () => {
      // Stored before the address field refused them: a comma, a display name with angle brackets, a semicolon.
      const hidden = /^(victim|mallory|a|b)@example\.org$/;
      for (const to of ['mallory,victim@example.org', 'victim@example.org <mallory@example.org>', 'a@example.org;b@example.org']) {
        const mailer = await options.create();
        const id = `${randomUUID()}@portal.test`;
        const before = (await options.envelopes?.())?.length ?? 0;
        const sent = await mailer.send({ to, subject: 'One recipient', text: 'text', html: '<p>html</p>', messageId: id }).then(
          () => true,
          // A mail server may refuse such an address whole: then nobody gets the message, which is safe too.
          () => false,
        );
        await mailer.close();
        if (!sent) continue;
        const message = await deliveredMessage(options, id);
        const recipients = (Array.isArray(message.to) ? message.to : [message.to]).flatMap((list) => list?.value ?? []);
        // One recipient, never one of the addresses hidden inside the stored text.
        expect(recipients).toHaveLength(1);
        expect(unquoted(recipients[0]!.address ?? '')).not.toMatch(hidden);
        if (to === 'mallory,victim@example.org') expect(unquoted(recipients[0]!.address ?? '')).toBe(to);
        if (options.envelopes) {
          const envelopes = (await options.envelopes()).slice(before);
          expect(envelopes).toHaveLength(1);
          expect(envelopes[0]).toHaveLength(1);
          expect(unquoted(envelopes[0]![0]!)).not.toMatch(hidden);
        }
      }
    });

    it('answers ping', async () => {
      const mailer = await options.create();
      await expect(mailer.ping()).resolves.toBeUndefined();
      await mailer.close();
    });
  });
}
