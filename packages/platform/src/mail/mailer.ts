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
  /** The account the message is for, so that it can be forgotten with the account. */
  recipientId?: string;
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
  /**
   * Removes what this mailer kept of the messages sent to an account (the outbox's copies).
   * A message handed to a mail server has left the portal: nothing to remove here. Answers how
   * many messages were removed.
   */
  forget(recipientId: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
