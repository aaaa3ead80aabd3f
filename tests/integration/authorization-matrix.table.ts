/**
 * The authorization matrix: every route the portal serves, for four callers, with the answer each
 * must get. tests/integration/authorization-matrix.test.ts compares the keys of this table with
 * the routes the running code declares (both ways), so a route added without an entry here fails
 * the suite, and then plays every probe for every caller through the gateway.
 *
 * Keys are "<service> <METHOD> <path pattern as declared>". The callers:
 * - visitor: no session;
 * - owner: the participant the resource belongs to (their item, upload, account, pictures);
 * - other: another participant;
 * - admin: an administrator.
 */
import { GATEWAY_ROUTES } from '@portal/gateway';
import type { ApiClient } from '../support/api-client.js';
import type { EvidenceItem } from '../support/evidence.js';
import { phoneJpeg, registrationForm } from '../support/media.js';

export type Caller = 'visitor' | 'owner' | 'other' | 'admin';
export const CALLERS: readonly Caller[] = ['visitor', 'owner', 'other', 'admin'];

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  data?: unknown;
  /** Set by a probe whose status was right but whose answer showed what it must not. */
  violation?: string;
}

export interface Account {
  id: string;
  username: string;
  email: string;
  password: string;
}

/** What probes may ask for; every resource belongs to the owner unless said otherwise. */
export interface MatrixContext {
  /** The standing session of each caller (a visitor's client holds no cookie). */
  client(caller: Caller): ApiClient;
  /** Another session of the caller's account, for probes that end or replace a session. */
  freshSession(caller: Caller): Promise<ApiClient>;
  account(caller: Exclude<Caller, 'visitor'>): Account;
  /** The owner's processed photo, private at the time of asking. */
  privatePhoto(): Promise<EvidenceItem>;
  /** The owner's processed photo, public at the time of asking. */
  publicPhoto(): Promise<EvidenceItem>;
  /** A new note of the owner (private). */
  ownerNote(): Promise<EvidenceItem>;
  /** A new unfinished resumable upload of the owner (10 bytes announced, none sent): its URL. */
  ownerUpload(): Promise<string>;
  /** A resumable upload of the owner that became an item: its URL. */
  finishedUpload(): Promise<string>;
  /** A new participant, signed in; when asked as 'owner' in a probe, they are the owner. */
  freshParticipant(): Promise<{ client: ApiClient; account: Account }>;
  /** Sends a reset code to an address and reads it from the outbox. */
  resetCode(email: string): Promise<string>;
  /** A request with a raw body (tus PATCH). */
  raw(client: ApiClient, method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Answer>;
}

/** A status, or several that are equally right (e.g. 404 or 410 for an upload that is gone). */
export type Status = number | readonly number[];
export type Expected = Status | Record<Caller, Status>;

export interface Probe {
  what: string;
  run(caller: Caller, ctx: MatrixContext): Promise<Answer>;
  expect: Expected;
}

/** visitor, owner, other, admin. */
const by = (visitor: Status, owner: Status, other: Status, admin: Status): Record<Caller, Status> => ({ visitor, owner, other, admin });
const probe = (what: string, expect: Expected, run: Probe['run']): Probe => ({ what, expect, run });
const as = (ctx: MatrixContext, caller: Caller) => ctx.client(caller);

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (value: string) => Buffer.from(value).toString('base64');
const tusMetadata = `title ${b64('Matrix upload')},filename ${b64('clip.bin')}`;

function createUpload(client: ApiClient, path = '/api/evidence/uploads'): Promise<Answer> {
  return client.request('POST', path, { headers: { ...TUS, 'upload-length': '10', 'upload-metadata': tusMetadata } });
}

/** A profile update that keeps the account's address (changing it would ask for a new confirmation). */
export function profileForm(email: string): FormData {
  const form = new FormData();
  form.append('email', email);
  form.append('phone_number', '5551234567');
  form.append('pronouns', 'They/Them');
  return form;
}

function titleForm(): FormData {
  const form = new FormData();
  form.append('title', 'Renamed by the matrix');
  form.append('notes', 'changed');
  return form;
}

/** The appointment of an account (set by an administrator when it has none): its id. */
async function appointmentOf(ctx: MatrixContext, caller: Exclude<Caller, 'visitor'>): Promise<string> {
  const answer = await ctx.client('admin').post('/api/appointments', { email: ctx.account(caller).email, start: '2030-07-01T18:30' });
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`setting an appointment failed: ${answer.status} ${answer.text}`);
  return (answer.data as { id: string }).id;
}

/** Signed-in callers act on themselves; a visitor on the owner. */

// --- the public API ------------------------------------------------------------------------------

export const API_ROUTES: Record<string, Probe[]> = {
  // ---- identity: accounts ----
  'identity POST /api/user/register': [
    // A signed-in person may register another account too: it is a new participant, never more.
    probe('a new account', 201, async (caller, ctx) => {
      const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
      const email = `m_${tag}@example.org`;
      // The form claims an administrator's role: the server must not care.
      const form = registrationForm(
        { username: `m_${tag}`, email, usernameOrEmail: email, role: '2' },
        { bytes: await phoneJpeg({ width: 64, height: 64 }) },
      );
      const answer = await as(ctx, caller).postForm('/api/user/register', form);
      if (answer.status === 201 && (answer.data as { role: number }).role !== 1)
        return { ...answer, violation: 'registered with a role other than participant' };
      return answer;
    }),
  ],
  'identity POST /api/user/check': [
    probe('username/email taken?', 200, (caller, ctx) =>
      as(ctx, caller).post('/api/user/check', { username: 'nobody_here', email: 'nobody@example.org' }),
    ),
  ],
  'identity POST /api/user/login': [
    probe('own credentials, in a separate session', by(200, 200, 200, 200), async (caller, ctx) => {
      const account = ctx.account(caller === 'visitor' ? 'other' : caller);
      return (await ctx.freshSession(caller)).post('/api/user/login', { username: account.username, password: account.password });
    }),
    probe('a wrong password', 401, async (caller, ctx) =>
      (await ctx.freshSession(caller)).post('/api/user/login', { username: ctx.account('owner').username, password: 'not-the-password' }),
    ),
  ],
  'identity POST /api/user/logout': [
    probe('ends a separate session', 200, async (caller, ctx) => (await ctx.freshSession(caller)).post('/api/user/logout')),
  ],
  'identity GET /api/user': [probe('who am I', by(401, 200, 200, 200), (caller, ctx) => as(ctx, caller).get('/api/user'))],
  'identity GET /api/session': [
    probe('who is signed in, never refused', 200, async (caller, ctx) => {
      const answer = await as(ctx, caller).get('/api/session');
      const user = (answer.data as { user?: { id?: string } | null } | undefined)?.user;
      const expected = caller === 'visitor' ? null : ctx.account(caller).id;
      if ((user?.id ?? null) !== expected)
        return { ...answer, violation: `answered user ${JSON.stringify(user?.id ?? null)} instead of ${JSON.stringify(expected)}` };
      return answer;
    }),
  ],
  'identity PUT /api/evidence/user': [
    probe('own profile', by(401, 200, 200, 200), (caller, ctx) =>
      as(ctx, caller).putForm('/api/evidence/user', profileForm(ctx.account(caller === 'visitor' ? 'owner' : caller).email)),
    ),
  ],
  'identity PUT /api/user/watched/:id': [
    probe("the owner's flag", by(401, 200, 403, 200), (caller, ctx) => as(ctx, caller).put(`/api/user/watched/${ctx.account('owner').id}`)),
  ],
  // Not public since issue 21.1: the archive shows no avatar (docs/SECURITY.md).
  'identity GET /api/user/:id/avatar': [
    probe("the owner's avatar", by(401, 200, 403, 200), (caller, ctx) =>
      as(ctx, caller)
        .bytes(`/api/user/${ctx.account('owner').id}/avatar`)
        .then(toAnswer),
    ),
  ],
  'identity GET /api/user/:id/verification-photo': [
    probe("the owner's verification photo", by(401, 200, 403, 200), (caller, ctx) =>
      as(ctx, caller)
        .bytes(`/api/user/${ctx.account('owner').id}/verification-photo`)
        .then(toAnswer),
    ),
  ],

  // ---- identity: administration ----
  'identity GET /api/user/users': [probe('every user', by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).get('/api/user/users'))],
  'identity PUT /api/user/admin/:id': [
    probe("edit the owner's details (unchanged values)", by(401, 403, 403, 200), (caller, ctx) => {
      const owner = ctx.account('owner');
      return as(ctx, caller).put(`/api/user/admin/${owner.id}`, {
        username: owner.username,
        email: owner.email,
        phone_number: '5551234567',
        full_name: 'Ida Informant',
      });
    }),
  ],
  'identity GET /api/user/:id/export': [
    probe("the owner's data export", by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller)
        .bytes(`/api/user/${ctx.account('owner').id}/export`)
        .then(toAnswer),
    ),
  ],
  'identity GET /api/admin/activity': [
    probe('the audit log', by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).get('/api/admin/activity?limit=5')),
  ],
  'identity GET /api/admin/activity.csv': [
    probe('the audit log as CSV', by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).get('/api/admin/activity.csv?action=admin.login'),
    ),
  ],
  'identity DELETE /api/user/:id': [
    probe('delete an account (the owner is a new participant each time)', by(401, 403, 403, 200), async (caller, ctx) => {
      const victim = await ctx.freshParticipant();
      const client = caller === 'owner' ? victim.client : as(ctx, caller);
      return client.delete(`/api/user/${victim.account.id}`);
    }),
  ],

  // ---- identity: appointments (participants read only their own; the rest is administrators') ----
  'identity GET /api/appointments/mine': [
    probe('own appointment, never the owner’s to anyone else', by(401, 200, 200, 200), async (caller, ctx) => {
      const ownerAppointment = await appointmentOf(ctx, 'owner');
      const answer = await as(ctx, caller).get('/api/appointments/mine');
      const shown = (answer.data as { appointment?: { id: string } | null } | undefined)?.appointment?.id ?? null;
      if (answer.status === 200 && caller !== 'owner' && shown === ownerAppointment)
        return { ...answer, violation: "answered the owner's appointment" };
      if (answer.status === 200 && caller === 'owner' && shown !== ownerAppointment)
        return { ...answer, violation: 'did not answer their own appointment' };
      return answer;
    }),
  ],
  'identity GET /api/appointments/mine.ics': [
    probe('own calendar file (others have no appointment)', by(401, 200, 404, 404), async (caller, ctx) => {
      await appointmentOf(ctx, 'owner');
      return as(ctx, caller).bytes('/api/appointments/mine.ics').then(toAnswer);
    }),
  ],
  'identity POST /api/appointments/import': [
    probe('import a CSV', by(401, 403, 403, 200), (caller, ctx) => {
      const form = new FormData();
      form.append(
        'file',
        new Blob([`email,start\nmatrix_${Date.now().toString(36)}@example.org,2030-07-01T18:30\n`], { type: 'text/csv' }),
        'tickets.csv',
      );
      return as(ctx, caller).postForm('/api/appointments/import', form);
    }),
    probe('preview a CSV import (dry run)', by(401, 403, 403, 200), (caller, ctx) => {
      const form = new FormData();
      form.append('file', new Blob([`email,start\nmatrix_dry@example.org,2030-07-01T18:30\n`], { type: 'text/csv' }), 'tickets.csv');
      return as(ctx, caller).postForm('/api/appointments/import?dry_run=true', form);
    }),
  ],
  'identity GET /api/appointments': [
    probe("a day's call sheet", by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).get('/api/appointments?date=2030-07-01')),
    probe("today's call sheet", by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).get('/api/appointments')),
  ],
  'identity POST /api/appointments': [
    probe('set an appointment', by(401, 403, 403, 201), (caller, ctx) =>
      as(ctx, caller).post('/api/appointments', {
        email: `matrix_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.org`,
        start: '2030-07-01T18:30',
      }),
    ),
  ],
  'identity POST /api/appointments/announce': [
    probe('announce to a day', by(401, 403, 403, 202), (caller, ctx) =>
      as(ctx, caller).post('/api/appointments/announce', { date: '2031-01-01', message: 'Matrix test' }),
    ),
    probe('count whom an announcement reaches (dry run)', by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).post('/api/appointments/announce?dry_run=true', { date: '2030-07-01' }),
    ),
  ],
  'identity GET /api/appointments/user/:id': [
    probe("the owner's appointment (user dialog)", by(401, 403, 403, 200), async (caller, ctx) => {
      await appointmentOf(ctx, 'owner');
      return as(ctx, caller).get(`/api/appointments/user/${ctx.account('owner').id}`);
    }),
  ],
  'identity GET /api/appointments/:id': [
    probe("the owner's appointment with its phone number", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).get(`/api/appointments/${await appointmentOf(ctx, 'owner')}`),
    ),
  ],
  'identity PATCH /api/appointments/:id': [
    probe("the status of the owner's appointment", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).request('PATCH', `/api/appointments/${await appointmentOf(ctx, 'owner')}`, { json: { status: 'called' } }),
    ),
  ],
  'identity DELETE /api/appointments/:id': [
    probe('cancel an appointment (a new one each time)', by(401, 403, 403, 200), async (caller, ctx) => {
      const created = await as(ctx, 'admin').post('/api/appointments', {
        email: `cancel_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.org`,
        start: '2030-07-01T18:30',
      });
      return as(ctx, caller).delete(`/api/appointments/${(created.data as { id: string }).id}`);
    }),
  ],

  // ---- identity: password reset and e-mail ----
  'identity POST /api/email/check-email': [
    probe('is the address known', 200, (caller, ctx) =>
      as(ctx, caller).post('/api/email/check-email', { email: ctx.account('owner').email }),
    ),
  ],
  'identity POST /api/email/send': [
    probe('send a code', 200, (caller, ctx) => as(ctx, caller).post('/api/email/send', { email: ctx.account('owner').email })),
  ],
  'identity PUT /api/email/reset-code': [
    probe('send another code', 200, (caller, ctx) => as(ctx, caller).put('/api/email/reset-code', { email: ctx.account('owner').email })),
  ],
  'identity POST /api/email/check/reset-code': [
    probe('a wrong code is only "no"', 200, async (caller, ctx) => {
      const { account } = await ctx.freshParticipant();
      return as(ctx, caller).post('/api/email/check/reset-code', { email: account.email, code: '000000' });
    }),
  ],
  'identity PUT /api/user/passwordupdated': [
    // The e-mailed code is the credential: whoever holds it may set the password, nobody without it.
    probe('with the e-mailed code', 200, async (caller, ctx) => {
      const { account } = await ctx.freshParticipant();
      const code = await ctx.resetCode(account.email);
      return as(ctx, caller).put('/api/user/passwordupdated', { email: account.email, code, password: 'a-new-password-1' });
    }),
    probe('without the code', 400, async (caller, ctx) => {
      const { account } = await ctx.freshParticipant();
      return as(ctx, caller).put('/api/user/passwordupdated', { email: account.email, code: '123456', password: 'a-new-password-1' });
    }),
  ],
  // No input: the link goes to the caller's own address (confirmed here: nothing is sent, 200).
  'identity POST /api/user/verify-email/resend': [
    probe("a new link for one's own address", by(401, 200, 200, 200), (caller, ctx) =>
      as(ctx, caller).post('/api/user/verify-email/resend'),
    ),
  ],
  'identity GET /api/user/verify-email': [
    probe('a forged link', 303, (caller, ctx) => as(ctx, caller).get('/api/user/verify-email?token=forged')),
  ],

  // ---- evidence ----
  'evidence POST /api/evidence': [
    probe('a note', by(401, 201, 201, 201), (caller, ctx) => as(ctx, caller).post('/api/evidence', { title: 'A note', notes: 'n' })),
  ],
  'evidence GET /api/evidence': [
    probe('own list, never anyone else’s', by(401, 200, 200, 200), async (caller, ctx) => {
      const answer = await as(ctx, caller).get('/api/evidence?limit=100');
      const ownerId = ctx.account('owner').id;
      if (answer.status === 200 && caller !== 'owner' && (answer.data as EvidenceItem[]).some((item) => item.user_id === ownerId))
        return { ...answer, violation: "the list holds the owner's items" };
      return answer;
    }),
  ],
  'evidence GET /api/evidence/public': [
    probe('the archive, public items only', 200, async (caller, ctx) => {
      const hidden = await ctx.privatePhoto();
      const answer = await as(ctx, caller).get('/api/evidence/public?limit=100');
      if ((answer.data as EvidenceItem[]).some((item) => item.id === hidden.id || !item.is_public))
        return { ...answer, violation: 'the archive holds a private item' };
      return answer;
    }),
  ],
  'evidence GET /api/evidence/admin': [
    probe('all evidence', by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).get('/api/evidence/admin')),
    probe('the review queue, searched', by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).get('/api/evidence/admin?review_status=new&visibility=private&q=evidence'),
    ),
  ],
  'evidence GET /api/evidence/export': [
    probe("the investigator's export of one private item", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller)
        .bytes(`/api/evidence/export?ids=${(await ctx.privatePhoto()).id}`)
        .then(toAnswer),
    ),
  ],
  'evidence GET /api/user/:id/evidence': [
    probe("the owner's evidence", by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).get(`/api/user/${ctx.account('owner').id}/evidence`),
    ),
  ],
  'evidence GET /api/evidence/item/:id': [
    probe('a private item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller).get(`/api/evidence/item/${(await ctx.privatePhoto()).id}`),
    ),
    probe('a public item', 200, async (caller, ctx) => as(ctx, caller).get(`/api/evidence/item/${(await ctx.publicPhoto()).id}`)),
  ],
  'evidence PUT /api/evidence/update/:id': [
    probe("the owner's item", by(401, 200, 403, 200), async (caller, ctx) =>
      as(ctx, caller).putForm(`/api/evidence/update/${(await ctx.ownerNote()).id}`, titleForm()),
    ),
  ],
  'evidence DELETE /api/evidence/delete/:id': [
    probe("the owner's item (a new one each time)", by(401, 200, 403, 200), async (caller, ctx) =>
      as(ctx, caller).delete(`/api/evidence/delete/${(await ctx.ownerNote()).id}`),
    ),
  ],
  'evidence PUT /api/evidence/clearance/:id': [
    probe("toggle the owner's item", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).put(`/api/evidence/clearance/${(await ctx.ownerNote()).id}`),
    ),
  ],
  'evidence GET /api/evidence/admin/counts': [
    probe('the review queue and archive counts', by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).get('/api/evidence/admin/counts'),
    ),
  ],
  'evidence PUT /api/evidence/visibility': [
    probe("publish the owner's item", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).put('/api/evidence/visibility', { ids: [(await ctx.ownerNote()).id], is_public: true }),
    ),
  ],
  'evidence PUT /api/evidence/review': [
    probe("mark the owner's item reviewed", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).put('/api/evidence/review', { ids: [(await ctx.ownerNote()).id] }),
    ),
  ],
  'evidence PUT /api/evidence/review/:id': [
    probe("mark the owner's item reviewed", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).put(`/api/evidence/review/${(await ctx.ownerNote()).id}`),
    ),
  ],
  'evidence GET /api/evidence/:id/faces': [
    probe("the faces of the owner's photo", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).get(`/api/evidence/${(await ctx.privatePhoto()).id}/faces`),
    ),
  ],
  'evidence PUT /api/evidence/:id/faces': [
    probe("change the faces of the owner's photo", by(401, 403, 403, 200), async (caller, ctx) => {
      const id = (await ctx.privatePhoto()).id;
      const base = ((await as(ctx, 'admin').get(`/api/evidence/${id}/faces`)).data as { version: number }).version;
      return as(ctx, caller).put(`/api/evidence/${id}/faces`, { base, removed: [], added: [] });
    }),
  ],
  'evidence PUT /api/evidence/:id/faces/consent': [
    probe("consent on record for the owner's photo", by(401, 403, 403, 200), async (caller, ctx) =>
      as(ctx, caller).put(`/api/evidence/${(await ctx.privatePhoto()).id}/faces/consent`, { consent: false }),
    ),
  ],
  'evidence PUT /api/evidence/makeAllPublic': [
    probe('everything public', by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).put('/api/evidence/makeAllPublic')),
  ],
  'evidence PUT /api/evidence/makeAllSecret': [
    probe('everything private', by(401, 403, 403, 200), (caller, ctx) => as(ctx, caller).put('/api/evidence/makeAllSecret')),
  ],
  'evidence ALL /api/evidence/{*rest}': [
    probe('an unknown evidence path', 404, (caller, ctx) => as(ctx, caller).get('/api/evidence/no-such-thing')),
    probe('a method tus does not answer, on an upload', 404, async (caller, ctx) =>
      as(ctx, caller).request('PUT', await ctx.ownerUpload(), { json: {}, headers: TUS }),
    ),
  ],

  // ---- evidence: media ----
  'evidence GET /media/evidence/:id/:variant': [
    probe('display of a private item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller)
        .bytes((await ctx.privatePhoto()).aws_url!)
        .then(toAnswer),
    ),
    probe('thumbnail of a private item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller)
        .bytes((await ctx.privatePhoto()).thumbnail_url!)
        .then(toAnswer),
    ),
    probe('HEAD of a private item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller).request('HEAD', (await ctx.privatePhoto()).aws_url!),
    ),
    probe('original of a private item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller)
        .bytes(variant(await ctx.privatePhoto(), 'original'))
        .then(toAnswer),
    ),
    probe('display of a public item', 200, async (caller, ctx) =>
      as(ctx, caller)
        .bytes((await ctx.publicPhoto()).aws_url!)
        .then(toAnswer),
    ),
    // An original keeps its GPS metadata: never public, whatever the item's visibility.
    probe('original of a public item', by(404, 200, 404, 200), async (caller, ctx) =>
      as(ctx, caller)
        .bytes(variant(await ctx.publicPhoto(), 'original'))
        .then(toAnswer),
    ),
  ],

  // ---- evidence: resumable uploads (tus) ----
  'evidence POST /api/evidence/uploads': [probe('start an upload', by(401, 201, 201, 201), (caller, ctx) => createUpload(as(ctx, caller)))],
  'evidence POST /api/evidence/uploads/{*rest}': [
    // tus ignores the id in the URL of a POST: it starts a new upload, the caller's own.
    probe("POST to the owner's upload URL", by(401, 201, 201, 201), async (caller, ctx) =>
      createUpload(as(ctx, caller), await ctx.ownerUpload()),
    ),
  ],
  // What the server supports (versions, extensions, largest size): the same for everyone.
  'evidence OPTIONS /api/evidence/uploads': [
    probe('protocol discovery', 204, (caller, ctx) => as(ctx, caller).request('OPTIONS', '/api/evidence/uploads')),
  ],
  'evidence OPTIONS /api/evidence/uploads/{*rest}': [
    probe("protocol discovery on the owner's upload", 204, async (caller, ctx) =>
      as(ctx, caller).request('OPTIONS', await ctx.ownerUpload()),
    ),
  ],
  'evidence HEAD /api/evidence/uploads/:uploadId': [
    // The owner learns it is complete (and which item it became); to the rest it is gone or unknown.
    probe("offset of the owner's finished upload", by(401, 200, [404, 410], [404, 410]), async (caller, ctx) =>
      as(ctx, caller).request('HEAD', await ctx.finishedUpload(), { headers: TUS }),
    ),
  ],
  'evidence HEAD /api/evidence/uploads/{*rest}': [
    probe("offset of the owner's unfinished upload", by(401, 200, 403, 403), async (caller, ctx) =>
      as(ctx, caller).request('HEAD', await ctx.ownerUpload(), { headers: TUS }),
    ),
  ],
  'evidence HEAD /api/evidence/uploads': [
    probe('HEAD without an upload', 404, (caller, ctx) => as(ctx, caller).request('HEAD', '/api/evidence/uploads', { headers: TUS })),
  ],
  'evidence PATCH /api/evidence/uploads/{*rest}': [
    probe("bytes into the owner's upload", by(401, 204, 403, 403), async (caller, ctx) =>
      ctx.raw(
        as(ctx, caller),
        'PATCH',
        await ctx.ownerUpload(),
        { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        new Uint8Array(5),
      ),
    ),
  ],
  'evidence PATCH /api/evidence/uploads': [
    probe('PATCH without an upload', 404, (caller, ctx) =>
      ctx.raw(
        as(ctx, caller),
        'PATCH',
        '/api/evidence/uploads',
        { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        new Uint8Array(5),
      ),
    ),
  ],
  'evidence DELETE /api/evidence/uploads/{*rest}': [
    probe("end the owner's upload", by(401, 204, 403, 403), async (caller, ctx) =>
      as(ctx, caller).request('DELETE', await ctx.ownerUpload(), { headers: TUS }),
    ),
  ],
  'evidence DELETE /api/evidence/uploads': [
    probe('DELETE without an upload', 404, (caller, ctx) => as(ctx, caller).request('DELETE', '/api/evidence/uploads', { headers: TUS })),
  ],
  'evidence GET /api/evidence/uploads/{*rest}': [
    // Unfinished bytes are nobody's to read; the owner gets 404 until the upload is complete.
    probe("read the owner's unfinished upload", by(401, 404, 403, 403), async (caller, ctx) =>
      as(ctx, caller).get(await ctx.ownerUpload()),
    ),
  ],
  'evidence GET /api/evidence/uploads': [
    probe('GET without an upload', 404, (caller, ctx) => as(ctx, caller).get('/api/evidence/uploads')),
  ],

  // ---- the gateway's own API ----
  'gateway GET /api/config': [probe('public configuration', 200, (caller, ctx) => as(ctx, caller).get('/api/config'))],
  'gateway GET /api/openapi.json': [probe('the API description', 200, (caller, ctx) => as(ctx, caller).get('/api/openapi.json'))],
  'gateway GET /api/user/:id/evidence': [
    probe("(forwards to evidence) the owner's evidence", by(401, 403, 403, 200), (caller, ctx) =>
      as(ctx, caller).get(`/api/user/${ctx.account('owner').id}/evidence`),
    ),
  ],
  'gateway ALL /api/*': [
    probe('an unknown API path', 404, (caller, ctx) => as(ctx, caller).get('/api/nothing-here')),
    probe('an unknown API path, POST', 404, (caller, ctx) => as(ctx, caller).post('/api/nothing-here', {})),
  ],
  'gateway GET /healthz': [probe('liveness', 200, (caller, ctx) => as(ctx, caller).get('/healthz'))],
  'gateway GET /readyz': [probe('readiness', 200, (caller, ctx) => as(ctx, caller).get('/readyz'))],
};

/**
 * The gateway's forwarding routes, from the gateway's own route table (each proxied prefix is
 * declared twice, `/p` and `/p/*`): which service each reaches, for which methods. The probes above
 * travel through them; the test holds what the gateway declares to the table.
 */
export const GATEWAY_FORWARDS: Record<string, { to: 'identity' | 'evidence'; methods: string[] }> = Object.fromEntries(
  GATEWAY_ROUTES.filter((route) => route.proxy && route.upstream !== 'gateway').flatMap((route) => {
    const forward = { to: route.upstream as 'identity' | 'evidence', methods: [...route.methods] };
    return [
      [route.path, forward],
      [`${route.path}/*`, forward],
    ];
  }),
);

/** The gateway's web-app routes (present once the app is built), from its route table: not API, no probes here (GET routes answer HEAD too). */
export const GATEWAY_WEB_APP = GATEWAY_ROUTES.filter(
  (route) => route.upstream === 'gateway' && !route.path.startsWith('/api/') && route.path !== '/healthz' && route.path !== '/readyz',
).flatMap((route) =>
  route.methods.flatMap((method) => (method === 'GET' ? [`GET ${route.path}`, `HEAD ${route.path}`] : [`${method} ${route.path}`])),
);

/**
 * Routes that are never public, checked by rule rather than by entry: everything under
 * /internal/ (service to service, with a service token) and the services' own operations routes.
 * Through the gateway each must answer 404 to everyone, whatever the path tricks.
 */
export function isInternalRoute(path: string): boolean {
  return path.startsWith('/internal/') || path === '/healthz' || path === '/readyz' || path === '/metrics';
}

/**
 * API routes that exist but are not in the OpenAPI document, and why. Everything else the
 * services or the gateway serve under /api or /media must be documented.
 */
export const UNDOCUMENTED: Record<string, string> = {
  'evidence ALL /api/evidence/{*rest}': 'the JSON 404 for unknown evidence paths',
  'gateway ALL /api/*': 'the JSON 404 for unknown API paths',
  'gateway GET /api/openapi.json': 'the document itself',
  'evidence GET /api/evidence/uploads': 'tus plumbing: answers 404',
  'evidence HEAD /api/evidence/uploads': 'tus plumbing: answers 404',
  'evidence PATCH /api/evidence/uploads': 'tus plumbing: answers 404',
  'evidence DELETE /api/evidence/uploads': 'tus plumbing: answers 404',
  'evidence POST /api/evidence/uploads/{*rest}': 'tus plumbing: answers 404',
  'evidence OPTIONS /api/evidence/uploads': 'tus protocol discovery (tus-js-client does not use it)',
  'evidence OPTIONS /api/evidence/uploads/{*rest}': 'tus protocol discovery',
  'evidence GET /api/evidence/uploads/{*rest}': 'tus download of a finished upload; finished uploads become items and are removed at once',
  'evidence DELETE /api/evidence/uploads/{*rest}':
    'tus termination of an unfinished upload (its creator only); the app lets unfinished uploads expire',
};

function variant(item: EvidenceItem, name: string): string {
  return item.aws_url!.replace(/\/display(\?|$)/, `/${name}$1`);
}

function toAnswer(response: { status: number; headers: Headers; body: Buffer }): Answer {
  return { status: response.status, headers: response.headers, text: '' };
}
