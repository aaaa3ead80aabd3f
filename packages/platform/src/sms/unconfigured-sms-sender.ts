import { SmsRefusedError, type SentSms, type SmsSender } from './sms-sender.js';

/** Why nothing is texted, for the call sheet, the log and the readiness answer. */
export const NO_SMS_PROVIDER = 'no text-message provider is set up (TWILIO_ACCOUNT_SID): texts are not sent';

/**
 * The text-message sender of a notifier that runs on distributed servers without a provider set
 * up. The JSON outbox is the all-in-one portal's: in a pod its folder is scratch space that nobody
 * reads and that goes with the pod, so a text "sent" there would be lost while the call sheet
 * said sent. This sender sends nothing and says so: every message is refused for good (the
 * appointment records it as failed, with this reason), and its readiness check fails (the
 * notifier answers degraded, portal_dependency_up{dependency="sms"} is 0, an alert fires).
 */
export class UnconfiguredSmsSender implements SmsSender {
  async send(): Promise<SentSms> {
    throw new SmsRefusedError(NO_SMS_PROVIDER);
  }

  async forget(): Promise<number> {
    return 0;
  }

  async ping(): Promise<void> {
    throw new Error(NO_SMS_PROVIDER);
  }

  async close(): Promise<void> {}
}
