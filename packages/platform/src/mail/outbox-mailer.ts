import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { MailMessage, Mailer, SentMail } from './mailer.js';
import { nodemailerMessage } from './nodemailer-message.js';

/**
 * The embedded mailer: every message is composed by nodemailer exactly as it would go over SMTP,
 * written as an .eml file to the outbox folder (open it with any mail program), and logged.
 */
export class OutboxMailer implements Mailer {
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    private readonly directory: string,
    private readonly from: string,
    private readonly logger: Logger,
  ) {}

  async send(message: MailMessage): Promise<SentMail> {
    const info = (await this.composer.sendMail(nodemailerMessage(this.from, message))) as { messageId: string; message: Buffer };
    await mkdir(this.directory, { recursive: true });
    // The account's id in the name lets forget() find its messages without opening any file.
    const recipient = message.recipientId ? `${message.recipientId.replace(/[^A-Za-z0-9-]/g, '')}~` : '';
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${recipient}${info.messageId.replace(/[^A-Za-z0-9.@_-]/g, '')}.eml`;
    const tmp = join(this.directory, `.${name}.tmp`);
    await writeFile(tmp, info.message);
    await rename(tmp, join(this.directory, name));
    this.logger.info({ to: message.to, subject: message.subject, file: name }, 'mail written to the outbox');
    return { messageId: info.messageId.replace(/^<|>$/g, '') };
  }

  async forget(recipientId: string): Promise<number> {
    const id = recipientId.replace(/[^A-Za-z0-9-]/g, '');
    if (!id) return 0;
    const marker = `-${id}~`;
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return 0;
    }
    const theirs = names.filter((name) => name.includes(marker));
    await Promise.all(theirs.map((name) => rm(join(this.directory, name), { force: true })));
    if (theirs.length > 0) this.logger.info({ removed: theirs.length }, 'mail of a deleted account removed from the outbox');
    return theirs.length;
  }

  async ping(): Promise<void> {
    await mkdir(this.directory, { recursive: true });
  }

  async close(): Promise<void> {
    this.composer.close();
  }
}
