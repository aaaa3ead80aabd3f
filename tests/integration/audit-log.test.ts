import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '@portal/contracts';
import { waitFor } from '@portal/platform/testing';
import { runAdminCommand } from '@portal/identity';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { startTestPortal, TEST_ADMIN, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let admin: Awaited<ReturnType<typeof adminClient>>;
beforeAll(async () => {
  portal = await startTestPortal();
  admin = await adminClient(portal.url);
});
afterAll(() => portal.dispose());

async function activity(query: string): Promise<AuditEntry[]> {
  const response = await admin.client.get(`/api/admin/activity${query}`);
  expect(response.status).toBe(200);
  return response.data as AuditEntry[];
}

/** Waits until an entry matching the query (and the check) is in the log. */
function entry(query: string, check: (entry: AuditEntry) => boolean = () => true): Promise<AuditEntry> {
  return waitFor(async () => (await activity(query)).find(check), { what: `an audit entry for ${query}` });
}

describe('the audit log', () => {
  it("records an administrator's login, publishing, unpublishing, editing and deleting evidence, with before and after", async () => {
    const login = await entry(`?action=admin.login&actor=${admin.user.id}`);
    expect(login).toMatchObject({ actor_username: TEST_ADMIN.username, target_type: 'user', target_id: admin.user.id, erased: false });

    const owner = await newParticipant(portal.url);
    const item = (await owner.client.post('/api/evidence', { title: 'Van parked twice', notes: 'Blue, no plates' })).data as { id: string };
    // A participant's own edit is not an administrative act.
    expect(
      (await owner.client.put(`/api/evidence/update/${item.id}`, { title: 'Van parked twice', notes: 'Blue, no plates, again' })).status,
    ).toBe(200);

    expect((await admin.client.put(`/api/evidence/clearance/${item.id}`)).status).toBe(200);
    expect((await admin.client.put(`/api/evidence/clearance/${item.id}`)).status).toBe(200);
    expect(
      (await admin.client.put(`/api/evidence/update/${item.id}`, { title: 'Van seen twice', notes: 'Blue, no plates, again' })).status,
    ).toBe(200);
    expect((await admin.client.delete(`/api/evidence/delete/${item.id}`)).status).toBe(200);

    const deleted = await entry(`?target=${item.id}&action=evidence.delete`);
    expect(deleted).toMatchObject({ actor_id: admin.user.id, actor_username: TEST_ADMIN.username, target_label: 'Van seen twice' });
    const acts = (await activity(`?target=${item.id}`)).map((e) => [e.action, e.before, e.after]);
    expect(acts).toEqual([
      [
        'evidence.delete',
        { title: 'Van seen twice', notes: 'Blue, no plates, again', is_public: false, author: owner.user.username },
        null,
      ],
      ['evidence.edit', { title: 'Van parked twice' }, { title: 'Van seen twice' }],
      ['evidence.unpublish', { is_public: true }, { is_public: false }],
      ['evidence.publish', { is_public: false }, { is_public: true }],
    ]);
  });

  it('records a selected publish or unpublish and marking reviewed, one entry per item changed', async () => {
    const owner = await newParticipant(portal.url);
    const post = async (title: string) => ((await owner.client.post('/api/evidence', { title, notes: '' })).data as { id: string }).id;
    const [a, b, c] = [await post('Chosen one'), await post('Chosen two'), await post('Left waiting')];
    const missing = '00000000-0000-4000-8000-000000000000';

    expect((await admin.client.put('/api/evidence/visibility', { ids: [a, b, missing], is_public: true })).status).toBe(200);
    // Already public: nothing changes, so nothing is recorded.
    expect((await admin.client.put('/api/evidence/visibility', { ids: [a], is_public: true })).status).toBe(200);
    expect((await admin.client.put('/api/evidence/visibility', { ids: [b], is_public: false })).status).toBe(200);
    expect((await admin.client.put('/api/evidence/review', { ids: [c, a] })).status).toBe(200);
    expect((await admin.client.put(`/api/evidence/review/${c}`)).status).toBe(200);

    const published = await entry(`?target=${a}&action=evidence.publish`);
    expect(published).toMatchObject({
      actor_id: admin.user.id,
      actor_username: TEST_ADMIN.username,
      target_type: 'evidence',
      target_label: 'Chosen one',
      before: { is_public: false },
      after: { is_public: true },
    });
    const reviewed = await entry(`?target=${c}&action=evidence.mark-reviewed`);
    expect(reviewed).toMatchObject({
      actor_id: admin.user.id,
      target_type: 'evidence',
      target_label: 'Left waiting',
      before: { review_status: 'new' },
      after: { review_status: 'reviewed' },
    });
    await entry(`?target=${b}&action=evidence.unpublish`);
    expect((await activity(`?target=${a}`)).map((e) => e.action)).toEqual(['evidence.publish']);
    expect((await activity(`?target=${b}`)).map((e) => [e.action, e.before, e.after])).toEqual([
      ['evidence.unpublish', { is_public: true }, { is_public: false }],
      ['evidence.publish', { is_public: false }, { is_public: true }],
    ]);
    // Marked reviewed once: the second call found it reviewed already.
    expect((await activity(`?target=${c}`)).map((e) => e.action)).toEqual(['evidence.mark-reviewed']);
    expect(await activity(`?target=${missing}`)).toEqual([]);
  });

  it('records Make All Public / Private with the number changed, edits of users and exports', async () => {
    const participant = await newParticipant(portal.url);
    await participant.client.post('/api/evidence', { title: 'Chalk mark', notes: '' });
    expect((await admin.client.put('/api/evidence/makeAllPublic')).status).toBe(200);
    expect((await admin.client.put('/api/evidence/makeAllPublic')).status).toBe(200);
    const all = await waitFor(async () => {
      const entries = await activity('?action=evidence.publish-all');
      return entries.length >= 2 ? entries : undefined;
    });
    expect(all[0]).toMatchObject({ target_type: 'archive', target_id: null, details: { changed: 0 } });
    expect((all[1]!.details as { changed: number }).changed).toBeGreaterThanOrEqual(1);

    const update = { username: participant.user.username, email: participant.user.email, phone_number: '5550001111', full_name: 'Renamed' };
    expect((await admin.client.put(`/api/user/admin/${participant.user.id}`, update)).status).toBe(200);
    const edit = await entry(`?target=${participant.user.id}&action=user.edit`);
    expect(edit.before).toEqual({ phone_number: '5551234567', full_name: 'Ida Informant' });
    expect(edit.after).toEqual({ phone_number: '5550001111', full_name: 'Renamed' });

    expect((await admin.client.bytes(`/api/user/${participant.user.id}/export`)).status).toBe(200);
    await entry(`?target=${participant.user.id}&action=user.export`, (e) => e.actor_id === admin.user.id);
  });

  it('records a promotion by the ops command, with the command as the actor', async () => {
    const participant = await newParticipant(portal.url);
    expect(await runAdminCommand(['promote', '--user', participant.user.username], { DATA_DIR: portal.dataDir }, () => undefined)).toBe(0);
    const promoted = await entry(`?target=${participant.user.id}&action=user.promote`);
    expect(promoted).toMatchObject({ actor_id: null, actor_username: 'ops command', before: { role: 1 }, after: { role: 2 } });
  });

  it('filters by actor, time and action, pages with a Link header, and downloads as CSV without formulas', async () => {
    const owner = await newParticipant(portal.url);
    const since = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const item = (
        await owner.client.post('/api/evidence', {
          title: i === 0 ? '=HYPERLINK("http://x.invalid")' : i === 1 ? "Report;=cmd|' /C calc'!A0" : `Item ${i}`,
          notes: 'a, "quoted" note',
        })
      ).data;
      ids.push(item.id);
      expect((await admin.client.put(`/api/evidence/clearance/${item.id}`)).status).toBe(200);
    }
    const query = `?actor=${TEST_ADMIN.username.toUpperCase()}&action=evidence.publish&from=${encodeURIComponent(since)}`;
    await waitFor(async () => (await activity(query)).length === 5, { what: 'five publications' });
    const first = await admin.client.get(`/api/admin/activity${query}&limit=2`);
    expect(first.data.map((e: AuditEntry) => e.target_id)).toEqual([ids[4], ids[3]]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toContain('cursor=');
    const second = await admin.client.get(next!);
    expect(second.data.map((e: AuditEntry) => e.target_id)).toEqual([ids[2], ids[1]]);
    expect(await activity(`${query}&to=${encodeURIComponent(since)}`)).toEqual([]);

    const csv = await admin.client.get(`/api/admin/activity.csv${query}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="activity-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      '"at","actor_username","actor_id","action","target_type","target_id","target_label","before","after","details","erased"',
    );
    expect(lines).toHaveLength(6);
    expect(lines.at(-1)).toContain(`,"'=HYPERLINK(""http://x.invalid"")",`);
    // A spreadsheet that splits on ";" (or a tab) sees no formula behind the separator either.
    expect(lines.at(-2)).toContain(`,"Report;'=cmd|' /C calc'!A0",`);
    for (const separator of [',', ';', '\t']) {
      const cells = lines.flatMap((line) => line.split(separator)).map((cell) => cell.replace(/^"/, '').trimStart());
      expect(
        cells.filter((cell) => /^[=+\-@]/.test(cell)),
        `split on ${JSON.stringify(separator)}`,
      ).toEqual([]);
    }
  });

  it('is for administrators only, and refuses filters it does not understand with a 400', async () => {
    const participant = await newParticipant(portal.url);
    expect((await new ApiClient(portal.url).get('/api/admin/activity')).status).toBe(401);
    expect((await participant.client.get('/api/admin/activity')).status).toBe(403);
    expect((await participant.client.get('/api/admin/activity.csv')).status).toBe(403);
    for (const query of ['?action=evidence.burn', '?from=yesterday', '?limit=0', `?actor=${'x'.repeat(101)}`]) {
      const response = await admin.client.get(`/api/admin/activity${query}`);
      expect(response.status, query).toBe(400);
      expect(response.data.message).toEqual(expect.any(String));
    }
    expect((await admin.client.get('/api/admin/activity.csv?to=never')).status).toBe(400);
  });

  it('keeps the entries about a deleted participant, without anything that identifies them', async () => {
    const participant = await newParticipant(portal.url);
    const item = (await participant.client.post('/api/evidence', { title: 'My street', notes: '' })).data as { id: string };
    expect((await admin.client.put(`/api/evidence/clearance/${item.id}`)).status).toBe(200);
    const update = { username: participant.user.username, email: participant.user.email, phone_number: '5550002222', full_name: 'Someone' };
    expect((await admin.client.put(`/api/user/admin/${participant.user.id}`, update)).status).toBe(200);
    await entry(`?target=${participant.user.id}&action=user.edit`);
    expect((await admin.client.delete(`/api/user/${participant.user.id}`)).status).toBe(200);

    const removal = await entry(`?action=user.delete&actor=${admin.user.id}`, (e) => e.erased && e.target_id === null && e.before === null);
    expect(removal.target_label).toBeNull();
    const published = await waitFor(async () => (await activity(`?target=${item.id}`)).find((e) => e.erased));
    expect(published).toMatchObject({
      action: 'evidence.publish',
      actor_username: TEST_ADMIN.username,
      target_label: null,
      before: null,
      after: null,
    });
    expect(await activity(`?target=${participant.user.id}`)).toEqual([]);
    const everything = (await admin.client.get('/api/admin/activity.csv')).text;
    expect(everything).not.toContain(participant.user.username);
    expect(everything).not.toContain(participant.user.email);
    expect(everything).not.toContain(participant.user.id);
  });
});
