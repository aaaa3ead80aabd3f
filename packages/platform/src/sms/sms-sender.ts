export interface SmsMessage {
  /** E.164, e.g. +12025550123. */
  to: string;
  body: string;
  /** A stable id of the message (e.g. derived from the job that sends it), kept with the copy. */
  messageId: string;
  /** Whose message it is (an account or appointment id), so that it can be forgotten with them. */
  recipientId?: string;
}

export interface SentSms {
  /** The provider's id of the message (or the outbox file's). */
  providerId: string;
}

/** A message the provider refused for good (a number it cannot text): trying again will not help. */
export class SmsRefusedError extends Error {
  override name = 'SmsRefusedError';
}

/**
 * The text-message port. Contract (shared by the JSON outbox and the Twilio adapters): send hands
 * one message to the given E.164 number and answers the provider's id; it rejects when the
 * message could not be handed over (the caller retries with backoff), with SmsRefusedError when
 * the provider refused it for good.
 */
export interface SmsSender {
  send(message: SmsMessage): Promise<SentSms>;
  /** Removes what this sender kept of a recipient's messages (the outbox's copies); answers how many. */
  forget(recipientId: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
