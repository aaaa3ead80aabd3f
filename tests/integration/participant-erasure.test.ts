import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, confirmAddress } from '../support/accounts.js';
import { searchDataDir, type Finding } from '../support/data-dir-search.js';
import { waitForMail } from '../support/outbox.js';
import { populatedParticipant, readZip, sha256 } from '../support/participant-data.js';
import { startTestPortal, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'participant-erasure-'));
  // The bus keeps handled events a minute by default; the test need not wait that long.
  portal = await startTestPortal({ BUS_PRUNE_AFTER_MS: '1000' });
}, 60_000);
afterAll(async () => {
  await portal?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('deleting a participant', () => {
  it('leaves nothing of theirs anywhere under DATA_DIR', async () => {
    const someone = await populatedParticipant(portal.url, scratch, '5557770123');
    // A password reset: a code in the reset store, an e-mail in the outbox.
    expect((await new ApiClient(portal.url).post('/api/email/send', { email: someone.user.email })).status).toBe(200);
    await waitForMail(portal.dataDir, someone.user.email, { subject: /code|reset/i });
    // They confirmed their address: the appointment under it is theirs, and goes with them.
    await confirmAddress(portal.dataDir, someone);
    const admin = (await adminClient(portal.url)).client;
    // An appointment with a number of its own: its row, its confirmation by e-mail and by text.
    const appointment = await admin.post('/api/appointments', {
      email: someone.user.email,
      start: '2030-07-01T18:30',
      phone: '2025550177',
    });
    expect(appointment.status).toBe(201);
    expect((await admin.request('PATCH', `/api/appointments/${appointment.data.id}`, { json: { status: 'called' } })).status).toBe(200);
    await waitForMail(portal.dataDir, someone.user.email, { subject: /your appointment/i });
    await waitFor(
      async () =>
        ((await admin.get(`/api/appointments/${appointment.data.id}`)).data.deliveries as { key: string }[]).some(
          (d) => d.key === 'confirmation:sms',
        ) || null,
      {
        what: 'the confirmation by text',
      },
    );
    // Administrative acts about them: the audit log's entries name them until they are deleted.
    expect((await admin.put(`/api/evidence/clearance/${someone.note.id}`)).status).toBe(200);
    const edit = {
      username: someone.user.username,
      email: someone.user.email,
      phone_number: someone.user.phone_number,
      full_name: 'Renamed Person',
    };
    expect((await admin.put(`/api/user/admin/${someone.user.id}`, edit)).status).toBe(200);
    await waitFor(async () => (await admin.get(`/api/admin/activity?target=${someone.user.id}&action=user.edit`)).data.length === 1, {
      what: 'the audit entry of the edit',
    });

    // Every file the portal holds of theirs (pictures, originals, derivatives) and what they sent.
    const exported = await readZip((await admin.bytes(`/api/user/${someone.user.id}/export`)).body);
    const hashes: Record<string, string> = {};
    for (const [name, bytes] of exported) if (!name.endsWith('.json')) hashes[name] = sha256(bytes);
    for (const [name, bytes] of Object.entries(someone.uploads)) hashes[`uploaded ${name}`] = sha256(bytes);
    expect(Object.keys(hashes).length).toBeGreaterThanOrEqual(4 + 7);
    const needles = {
      'user id': someone.user.id,
      username: someone.user.username,
      'e-mail address': someone.user.email,
      'phone number': someone.user.phone_number,
      'appointment phone number': '+12025550177',
    };
    // The search does find them while the account exists (so that an empty result means something).
    const before = searchDataDir(portal.dataDir, needles, hashes);
    for (const what of ['user id', 'username', 'e-mail address', 'phone number', 'appointment phone number', `sha256 of uploaded photo`]) {
      expect(
        before.map((finding) => finding.what),
        what,
      ).toContain(what);
    }

    const deleted = await admin.delete(`/api/user/${someone.user.id}`);
    expect(deleted.status).toBe(200);
    expect((await someone.client.get('/api/user')).status).toBe(401);

    let left: Finding[] = [];
    await waitFor(
      () => {
        left = searchDataDir(portal.dataDir, needles, hashes);
        return left.length === 0 ? true : null;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'every trace of the deleted participant to go' },
    ).catch(() => undefined);
    expect(left, 'what is still there').toEqual([]);

    // The audit log keeps what was done, without who it was done to.
    const kept = (await admin.get(`/api/admin/activity?target=${someone.note.id}`)).data;
    expect(kept).toMatchObject([{ action: 'evidence.publish', erased: true, target_label: null, before: null, after: null }]);
    const edits = (await admin.get('/api/admin/activity?action=user.edit')).data as { erased: boolean; target_id: string | null }[];
    expect(edits.filter((entry) => entry.erased && entry.target_id === null)).toHaveLength(1);

    // The portal still works for everyone else.
    expect((await admin.get('/api/user/users')).status).toBe(200);
    expect((await admin.get(`/api/user/${someone.user.id}/export`)).status).toBe(404);
    expect((await admin.get(`/api/appointments/${appointment.data.id}`)).status).toBe(404);
  }, 180_000);
});
