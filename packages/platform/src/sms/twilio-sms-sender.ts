import twilio from 'twilio';
import { DependencyUnavailableError } from '../resilience/failures.js';
import { SmsRefusedError, type SentSms, type SmsMessage, type SmsSender } from './sms-sender.js';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** The sending number (E.164) or, instead, a Messaging Service SID (MG...). */
  from?: string;
  messagingServiceSid?: string;
  /** Another address of the REST API (TWILIO_API_BASE_URL: a regional edge or a proxy); default https://api.twilio.com. */
  apiBaseUrl?: string;
  /** Time allowed for one request (ms). */
  timeoutMs?: number;
}

/** Twilio error codes that mean the number will never take the message (not worth retrying). */
const PERMANENT = new Set([21211, 21214, 21408, 21610, 21612, 21614]);

/**
 * Text messages through Twilio's Messages API, with the official `twilio` client. Retries are the
 * job queue's (with backoff), not the client's: a send is tried once per job attempt.
 */
export class TwilioSmsSender implements SmsSender {
  private readonly client: twilio.Twilio;

  constructor(private readonly settings: TwilioSettings) {
    if (!settings.from && !settings.messagingServiceSid) throw new Error('Twilio needs TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID');
    this.client = twilio(settings.accountSid, settings.authToken, { autoRetry: false, timeout: settings.timeoutMs ?? 15_000 });
    // The client has no option for the API's address; its Api domain keeps it as baseUrl.
    if (settings.apiBaseUrl) this.client.api.baseUrl = settings.apiBaseUrl.replace(/\/+$/, '');
  }

  async send(message: SmsMessage): Promise<SentSms> {
    try {
      const sent = await this.client.messages.create({
        to: message.to,
        body: message.body,
        ...(this.settings.messagingServiceSid ? { messagingServiceSid: this.settings.messagingServiceSid } : { from: this.settings.from! }),
      });
      return { providerId: sent.sid };
    } catch (error) {
      const { status, code, message: text } = error as { status?: number; code?: number; message?: string };
      if (status !== undefined && status >= 400 && status < 500 && status !== 429 && code !== undefined && PERMANENT.has(code)) {
        throw new SmsRefusedError(`Twilio refused the message (${code}): ${text ?? ''}`);
      }
      // Anything else (no answer, 429, 5xx, credentials refused) is the provider's side: the message
      // waits for it (held until the appointment's start), its tries unspent.
      throw new DependencyUnavailableError(
        'sms',
        `Twilio did not take the message${status ? ` (HTTP ${status}${code ? `, ${code}` : ''})` : ''}: ${text ?? String(error)}`,
        { cause: error },
      );
    }
  }

  async forget(): Promise<number> {
    // A message handed to the provider has left the portal: nothing kept here.
    return 0;
  }

  async ping(): Promise<void> {
    // The account's own record: a real round trip that checks the credentials.
    await this.client.api.v2010.accounts(this.settings.accountSid).fetch();
  }

  async close(): Promise<void> {}
}
