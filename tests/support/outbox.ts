import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { waitFor } from '@portal/platform/testing';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

/** Every e-mail the portal wrote to DATA_DIR/outbox, oldest first. */
export async function readOutbox(dataDir: string): Promise<ReceivedMail[]> {
  let names: string[] = [];
  try {
    names = readdirSync(join(dataDir, 'outbox')).filter((name) => name.endsWith('.eml')).sort();
  } catch {
    return [];
  }
  return Promise.all(
    names.map(async (name) => {
      const mail = await simpleParser(readFileSync(join(dataDir, 'outbox', name)));
      return {
        to: mail.to && !Array.isArray(mail.to) ? mail.to.text : '',
        subject: mail.subject ?? '',
        text: mail.text ?? '',
        html: typeof mail.html === 'string' ? mail.html : '',
        messageId: mail.messageId ?? '',
      };
    }),
  );
}

/** Waits for the n-th e-mail to an address (1 = first) and answers it. */
export async function waitForMail(dataDir: string, to: string, { count = 1, subject }: { count?: number; subject?: RegExp } = {}): Promise<ReceivedMail> {
  return waitFor(
    async () => {
      const mails = (await readOutbox(dataDir)).filter((mail) => mail.to.includes(to) && (!subject || subject.test(mail.subject)));
      return mails.length >= count ? mails[count - 1]! : null;
    },
    { timeoutMs: 15_000, what: `e-mail #${count} to ${to}` },
  );
}

export function codeIn(mail: ReceivedMail): string {
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  if (!code) throw new Error(`no code in: ${mail.text}`);
  return code;
}
