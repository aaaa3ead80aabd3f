import type { MailMessage } from './mailer.js';

/**
 * The message as nodemailer takes it, from the configured sender, with both parts and the stable
 * Message-ID (nodemailer wants it in angle brackets). Both adapters send exactly this.
 */
export function nodemailerMessage(from: string, message: MailMessage) {
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    ...(message.messageId ? { messageId: `<${message.messageId}>` } : {}),
  };
}
