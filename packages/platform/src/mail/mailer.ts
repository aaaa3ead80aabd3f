export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /**
   * A stable Message-ID (without angle brackets), e.g. derived from the event that caused the
   * mail, so that a resent duplicate is recognisable as the same message.
   */
  messageId?: string;
}

export interface SentMail {
  messageId: string;
}

/**
 * The mailer port. Contract (shared by the .eml outbox and the SMTP adapters): a message is sent
 * with both a plain-text and an HTML part, from the configured sender, with the given Message-ID;
 * send rejects when the message could not be handed over, so the caller can retry.
 */
export interface Mailer {
  send(message: MailMessage): Promise<SentMail>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
