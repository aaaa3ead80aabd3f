import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage, Mailer, SentMail } from './mailer.js';
import { nodemailerMessage } from './nodemailer-message.js';

/** Mail over SMTP (nodemailer), from a URL such as smtp://user:pass@mail.example.org:587. */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(message: MailMessage): Promise<SentMail> {
    const info = await this.transport.sendMail(nodemailerMessage(this.from, message));
    return { messageId: String(info.messageId).replace(/^<|>$/g, '') };
  }

  /** The mail server has the message now; the portal keeps no copy. */
  async forget(): Promise<number> {
    return 0;
  }

  async ping(): Promise<void> {
    await this.transport.verify();
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
