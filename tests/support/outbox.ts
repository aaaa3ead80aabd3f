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

async function parse(raw: Buffer): Promise<ReceivedMail> {
  const mail = await simpleParser(raw);
  return {
    to: mail.to && !Array.isArray(mail.to) ? mail.to.text : '',
    subject: mail.subject ?? '',
    text: mail.text ?? '',
    html: typeof mail.html === 'string' ? mail.html : '',
    messageId: mail.messageId ?? '',
  };
}

/**
 * Every e-mail the portal sent, oldest first: the .eml files in DATA_DIR/outbox (all-in-one), or,
 * when the tests run against the distributed portal, what the SMTP catcher (MailDev) holds.
 */
export async function readOutbox(dataDir: string): Promise<ReceivedMail[]> {
  if (process.env.PORTAL_TEST_MODE === 'distributed' && process.env.MAIL_API) return readMailApi(process.env.MAIL_API);
  let names: string[] = [];
  try {
    names = readdirSync(join(dataDir, 'outbox'))
      .filter((name) => name.endsWith('.eml'))
      .sort();
  } catch {
    return [];
  }
  return Promise.all(names.map((name) => parse(readFileSync(join(dataDir, 'outbox', name)))));
}

/** Every e-mail an SMTP catcher's REST API (MailDev: MAIL_API) holds. */
export async function readMailApi(mailApi: string): Promise<ReceivedMail[]> {
  const list = (await (await fetch(`${mailApi}/email`)).json()) as { id: string }[];
  return Promise.all(list.map(async ({ id }) => parse(Buffer.from(await (await fetch(`${mailApi}/email/${id}/source`)).arrayBuffer()))));
}

/** Waits for the n-th e-mail to an address (1 = first) and answers it. */
export async function waitForMail(
  dataDir: string,
  to: string,
  { count = 1, subject, timeoutMs = 15_000 }: { count?: number; subject?: RegExp; timeoutMs?: number } = {},
): Promise<ReceivedMail> {
  return waitFor(
    async () => {
      const mails = (await readOutbox(dataDir)).filter((mail) => mail.to.includes(to) && (!subject || subject.test(mail.subject)));
      return mails.length >= count ? mails[count - 1]! : null;
    },
    { timeoutMs, what: `e-mail #${count} to ${to}` },
  );
}

export function codeIn(mail: ReceivedMail): string {
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  if (!code) throw new Error(`no code in: ${mail.text}`);
  return code;
}
