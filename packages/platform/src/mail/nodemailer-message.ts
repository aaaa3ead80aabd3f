import type { MailMessage } from './mailer.js';

/**
 * The message as nodemailer takes it, from the configured sender, with both parts and the stable
 * Message-ID (nodemailer wants it in angle brackets). Both adapters send exactly this.
 *
 * The recipient is handed over as an address object, never as a string: nodemailer parses a
 * string as an address list, so a stored 'mallory,victim@example.org' (or a display name with
 * angle brackets) would become other recipients than the one stored. As an object it is one
 * address, in the header (in angle brackets when it holds special characters) and in the envelope.
 */
export function nodemailerMessage(from: string, message: MailMessage) {
  return {
    from,
    to: { name: '', address: message.to },
    subject: message.subject,
    text: message.text,
    html: message.html,
    ...(message.messageId ? { messageId: `<${message.messageId}>` } : {}),
  };
}
