import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@portal/contracts';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { phoneJpeg, registrationForm } from '../support/media.js';
import { readZip } from '../support/participant-data.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let admin: ApiClient;
beforeAll(async () => {
  portal = await startTestPortal({ TERMS_VERSION: '2026-07', TERMS_URL: 'https://example.org/terms' });
  admin = (await adminClient(portal.url)).client;
});
afterAll(() => portal.dispose());

async function profileInExport(userId: string) {
  const files = await readZip((await admin.bytes(`/api/user/${userId}/export`)).body);
  return JSON.parse(files.get('profile.json')!.toString('utf8')).user;
}

describe('the participation terms', () => {
  it('are served to the web app with their version, from configuration', async () => {
    const config = await new ApiClient(portal.url).get('/api/config');
    expect(config.data.terms).toEqual({ version: '2026-07', text: null, url: 'https://example.org/terms' });
  });

  it('accepted at registration are recorded with the time, shown to administrators and in the export', async () => {
    const before = Date.now();
    const { user } = await newParticipant(portal.url, { terms_version: '2026-07' });
    const listed = (
      (await admin.get('/api/user/users?limit=200')).data as { id: string; terms_version: string; terms_accepted_at: string }[]
    ).find((u) => u.id === user.id)!;
    expect(listed.terms_version).toBe('2026-07');
    expect(Date.parse(listed.terms_accepted_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(listed.terms_accepted_at)).toBeLessThanOrEqual(Date.now());
    expect((await profileInExport(user.id)).participation_terms).toEqual({ version: '2026-07', accepted_at: listed.terms_accepted_at });
  });

  it('are "not recorded" for an account made without them', async () => {
    const { client, user } = await newParticipant(portal.url);
    expect((await client.get('/api/user')).data).toMatchObject({ terms_version: null, terms_accepted_at: null });
    expect((await profileInExport(user.id)).participation_terms).toBe(MESSAGES.termsNotRecorded);
  });

  it('of another version are refused with a 400 that says why, and no account is made', async () => {
    const fields = { username: 'late_reader', email: 'late_reader@example.org', password: 'password1', terms_version: '2025-01' };
    const refused = await new ApiClient(portal.url).postForm('/api/user/register', registrationForm(fields, { bytes: await phoneJpeg() }));
    expect(refused.status).toBe(400);
    expect(refused.data).toMatchObject({ message: MESSAGES.termsChanged, fields: { terms_version: MESSAGES.termsChanged } });
    expect((await new ApiClient(portal.url).post('/api/user/check', { username: 'late_reader' })).data.exists).toBe(false);
  });
});
