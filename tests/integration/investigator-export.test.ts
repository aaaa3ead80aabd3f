import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@portal/platform/testing';
import { ApiClient } from '../support/api-client.js';
import { adminClient, newParticipant } from '../support/accounts.js';
import { uploadEvidence, waitForMedia, type EvidenceItem } from '../support/evidence.js';
import { phoneJpeg } from '../support/media.js';
import { readZip, sha256 } from '../support/participant-data.js';
import { startTestPortal, TEST_ADMIN, type TestPortal } from '../support/portal.js';

let portal: TestPortal;
let scratch: string;
let admin: ApiClient;
let informant: Awaited<ReturnType<typeof newParticipant>>;
let photo: EvidenceItem;
let note: EvidenceItem;
let photoBytes: Buffer;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'investigator-export-'));
  portal = await startTestPortal();
  admin = (await adminClient(portal.url)).client;
  informant = await newParticipant(portal.url);
  photoBytes = await phoneJpeg({ width: 800, height: 600 });
  writeFileSync(join(scratch, 'street.jpg'), photoBytes);
  const uploaded = await uploadEvidence(informant.client, join(scratch, 'street.jpg'), {
    title: 'Street, 9 pm',
    notes: 'Two cars, "no lights"',
    location: '40.7, -74.0',
  });
  photo = await waitForMedia(informant.client, uploaded.data.id);
  expect(photo.media_status).toBe('ready');
  note = (
    await informant.client.post('/api/evidence', {
      title: '=1+1',
      notes: 'a note\nover two lines',
      location: "Report;=cmd|' /C calc'!A0\t@SUM(1),+1+1",
    })
  ).data;
  expect((await admin.put(`/api/evidence/clearance/${note.id}`)).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await portal?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

async function exported(query: string) {
  const response = await admin.bytes(`/api/evidence/export${query}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/zip');
  expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="evidence-export-[\d-T]+\.zip"$/);
  expect(response.headers.get('cache-control')).toBe('private, no-store');
  const files = await readZip(response.body);
  const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8'));
  return { files, manifest, csv: files.get('manifest.csv')!.toString('utf8') };
}

describe("the investigator's export", () => {
  it('holds manifest.csv, manifest.json and the display copy of every item, newest first', async () => {
    const { files, manifest, csv } = await exported('');
    expect(manifest.items.map((item: { id: string }) => item.id)).toEqual([note.id, photo.id]);
    expect(manifest.items[1]).toEqual({
      id: photo.id,
      title: 'Street, 9 pm',
      notes: 'Two cars, "no lights"',
      location: '40.7, -74.0',
      type: 'photo',
      posted: photo.date_posted,
      author: informant.user.username,
      public: false,
      review_status: 'new',
      files: [`media/${photo.id}/display.webp`],
    });
    expect(manifest.items[0]).toMatchObject({ type: 'note', public: true, review_status: 'reviewed', files: [] });
    expect(manifest.exported_by).toBe(TEST_ADMIN.username);
    const display = await admin.bytes(`/media/evidence/${photo.id}/display`);
    expect(sha256(files.get(`media/${photo.id}/display.webp`)!)).toBe(sha256(display.body));
    expect([...files.keys()].some((name) => name.includes('original'))).toBe(false);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('"id","title","notes","location","type","posted","author","public","review_status","files"');
    // Every text cell is quoted; a formula is neutralised at the start of a cell and behind a separator.
    expect(csv).toContain(`"${note.id}","'=1+1","a note\nover two lines","Report;'=cmd|' /C calc'!A0\t'@SUM(1),'+1+1","note",`);
    expect(csv).toContain(
      `"${photo.id}","Street, 9 pm","Two cars, ""no lights""","40.7, -74.0","photo","${photo.date_posted}","${informant.user.username}",false,"new","media/${photo.id}/display.webp"\r\n`,
    );
    for (const separator of [',', ';', '\t']) {
      const cells = csv
        .split('\r\n')
        .flatMap((line) => line.split(separator))
        .map((cell) => cell.replace(/^"/, '').trimStart());
      const formulas = cells.filter((cell) => /^[=+\-@]/.test(cell) && !/^-\d+(\.\d+)?"?$/.test(cell));
      expect(formulas, `split on ${JSON.stringify(separator)}`).toEqual([]);
    }
  });

  it('adds the originals as sent on request, and exports only the chosen ids or the filtered type', async () => {
    const withOriginals = await exported(`?originals=true&ids=${photo.id}`);
    expect(withOriginals.manifest.items.map((item: { id: string }) => item.id)).toEqual([photo.id]);
    expect(withOriginals.manifest.items[0].files).toEqual([`media/${photo.id}/display.webp`, `media/${photo.id}/original.jpg`]);
    expect(sha256(withOriginals.files.get(`media/${photo.id}/original.jpg`)!)).toBe(sha256(photoBytes));

    const missing = '00000000-0000-4000-8000-000000000000';
    const chosen = await exported(`?ids=${note.id},${missing}`);
    expect(chosen.manifest.items.map((item: { id: string }) => item.id)).toEqual([note.id]);
    expect(chosen.manifest.missing).toEqual([missing]);

    const notes = await exported('?type=1');
    expect(notes.manifest.items.map((item: { id: string }) => item.id)).toEqual([note.id]);
  });

  it("applies the administration list's filters: review state, visibility, search words and type, combined", async () => {
    const ids = async (query: string) => (await exported(query)).manifest.items.map((item: { id: string }) => item.id);
    // Each filter gives what GET /api/evidence/admin gives with it.
    for (const query of [
      '?review_status=new',
      '?review_status=reviewed',
      '?visibility=public',
      '?visibility=private',
      '?q=CARS',
      '?q=note%20lines',
      '?q=nothing-like-this',
      '?type=2&review_status=new',
      '?q=cars&visibility=public',
    ]) {
      const listed = (await admin.get(`/api/evidence/admin${query}`)).data.map((item: { id: string }) => item.id);
      expect(await ids(query), query).toEqual(listed);
    }
    expect(await ids('?review_status=new')).toEqual([photo.id]);
    expect(await ids('?visibility=public')).toEqual([note.id]);
    expect(await ids('?q=cars')).toEqual([photo.id]);
    expect(await ids('?q=cars&visibility=public')).toEqual([]);
    // ids choose the items; the filters do not narrow them further.
    expect(await ids(`?ids=${photo.id}&visibility=public`)).toEqual([photo.id]);

    const entry = await waitFor(async () =>
      ((await admin.get('/api/admin/activity?action=evidence.export')).data as { details: Record<string, unknown> }[]).find(
        (e) => e.details.q === 'cars' && e.details.visibility === 'public',
      ),
    );
    expect(entry).toMatchObject({
      target_label: 'Evidence matching the filters',
      details: { q: 'cars', visibility: 'public', originals: false },
    });
  });

  it('is recorded in the audit log', async () => {
    await exported(`?ids=${photo.id}&originals=true`);
    const entry = await waitFor(async () =>
      ((await admin.get('/api/admin/activity?action=evidence.export')).data as { details: { ids?: string[]; originals: boolean } }[]).find(
        (e) => e.details.ids?.[0] === photo.id && e.details.originals,
      ),
    );
    expect(entry).toMatchObject({ actor_username: TEST_ADMIN.username, target_type: 'archive' });
  });

  it('is for administrators only, and refuses what it does not understand with a 400', async () => {
    expect((await new ApiClient(portal.url).get('/api/evidence/export')).status).toBe(401);
    expect((await informant.client.get('/api/evidence/export')).status).toBe(403);
    for (const query of [
      '?ids=not-an-id',
      '?ids=',
      '?originals=yes',
      '?type=9',
      '?review_status=maybe',
      '?visibility=secret',
      `?q=${'a'.repeat(201)}`,
      `?q=${Array.from({ length: 13 }, (_, i) => `w${i}`).join('+')}`,
      `?ids=${Array.from({ length: 301 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(',')}`,
    ]) {
      const response = await admin.get(`/api/evidence/export${query}`);
      expect(response.status, query.slice(0, 40)).toBe(400);
      expect(response.data.message).toEqual(expect.any(String));
    }
  });
});
