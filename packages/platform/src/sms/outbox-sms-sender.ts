import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { SentSms, SmsMessage, SmsSender } from './sms-sender.js';

/**
 * The embedded text-message sender (all-in-one): one JSON file per message in the outbox folder
 * (DATA_DIR/sms-outbox), fields to, body, sent_at (and message_id), written whole (a temporary
 * file renamed), like the e-mails' .eml outbox.
 */
export class OutboxSmsSender implements SmsSender {
  constructor(
    private readonly directory: string,
    private readonly logger: Logger,
  ) {}

  async send(message: SmsMessage): Promise<SentSms> {
    await mkdir(this.directory, { recursive: true });
    const sentAt = new Date().toISOString();
    const recipient = message.recipientId ? `${message.recipientId.replace(/[^A-Za-z0-9-]/g, '')}~` : '';
    const name = `${sentAt.replace(/[:.]/g, '-')}-${recipient}${message.messageId.replace(/[^A-Za-z0-9._-]/g, '')}.json`;
    const tmp = join(this.directory, `.${name}.tmp`);
    await writeFile(tmp, JSON.stringify({ to: message.to, body: message.body, sent_at: sentAt, message_id: message.messageId }, null, 2));
    await rename(tmp, join(this.directory, name));
    this.logger.info({ file: name }, 'text message written to the outbox');
    return { providerId: name };
  }

  async forget(recipientId: string): Promise<number> {
    const id = recipientId.replace(/[^A-Za-z0-9-]/g, '');
    if (!id) return 0;
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return 0;
    }
    const theirs = names.filter((name) => name.includes(`-${id}~`));
    await Promise.all(theirs.map((name) => rm(join(this.directory, name), { force: true })));
    return theirs.length;
  }

  async ping(): Promise<void> {
    await mkdir(this.directory, { recursive: true });
  }

  async close(): Promise<void> {}
}
