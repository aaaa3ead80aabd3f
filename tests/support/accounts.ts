import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ApiClient } from './api-client.js';
import { phoneJpeg, registrationForm } from './media.js';
import { TEST_ADMIN } from './portal.js';
import { waitForMail } from './outbox.js';

let counter = 0;

/**
 * Registers and logs in a new participant who has watched the onboarding video (evidence waits
 * for it); answers a client holding their session. `{ watched: false }` leaves the video unwatched.
 */
export async function newParticipant(
  baseUrl: string,
  overrides: Record<string, string> = {},
  photo?: Buffer,
  options: { watched?: boolean } = {},
) {
  counter += 1;
  const tag = `${Date.now().toString(36)}${counter}`;
  const fields = {
    username: `informant_${tag}`,
    email: `informant_${tag}@example.org`,
    password: 'password1',
    ...overrides,
  };
  const client = new ApiClient(baseUrl);
  const registered = await client.postForm('/api/user/register', registrationForm(fields, { bytes: photo ?? (await phoneJpeg()) }));
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${registered.text}`);
  const login = await client.post('/api/user/login', { username: fields.username, password: fields.password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  const user = login.data as { id: string; username: string; email: string };
  if (options.watched !== false) {
    const watched = await client.put(`/api/user/watched/${user.id}`);
    if (watched.status !== 200) throw new Error(`marking the video watched failed: ${watched.status} ${watched.text}`);
  }
  return { client, user, password: fields.password };
}

/** What newParticipant answers: their API client (holding the session), the user and the password. */
export type NewParticipant = Awaited<ReturnType<typeof newParticipant>>;

export async function adminClient(baseUrl: string) {
  const client = new ApiClient(baseUrl);
  const login = await client.post('/api/user/login', { username: TEST_ADMIN.username, password: TEST_ADMIN.password });
  if (login.status !== 200) throw new Error(`admin login failed: ${login.status} ${login.text}`);
  return { client, user: login.data as { id: string } };
}

export interface PublishedEvent {
  topic: string;
  key: string;
  value: { id: string; type: string; data: Record<string, unknown> };
}

/** Every event on the embedded bus of a portal's data folder, oldest first. */
export function publishedEvents(dataDir: string): PublishedEvent[] {
  const db = new Database(join(dataDir, 'bus.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT topic, key, value FROM messages ORDER BY offset').all() as {
      topic: string;
      key: string;
      value: string;
    }[];
    return rows.map((row) => ({ topic: row.topic, key: row.key, value: JSON.parse(row.value) }));
  } finally {
    db.close();
  }
}

/**
 * Follows the newest confirmation link mailed to the participant's address, as they would from
 * their mailbox: an appointment under the address is theirs only once it is confirmed.
 */
export async function confirmAddress(
  dataDir: string,
  participant: { client: ApiClient; user: { email: string } },
  count = 1,
): Promise<void> {
  const mail = await waitForMail(dataDir, participant.user.email, { subject: /confirm/i, count, timeoutMs: 30_000 });
  const token = /verify-email\?token=([^\s&"<>]+)/.exec(mail.text)?.[1];
  if (!token) throw new Error(`no confirmation link in: ${mail.text}`);
  const followed = await participant.client.get(`/api/user/verify-email?token=${token}`);
  if (followed.headers.get('location') !== '/verify-email?status=verified')
    throw new Error(`the confirmation link failed: ${followed.status}`);
}
