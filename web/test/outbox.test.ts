// The offline outbox (web/src/outbox) in node: IndexedDB from fake-indexeddb, and the real
// evidence service (its composition root on the embedded adapters, listening on a free port) as
// the server. The one stand-in is the gateway: a fetch that resolves the app's same-origin paths
// against the service and adds the signed caller header the gateway adds for a session.
import 'fake-indexeddb/auto';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IDENTITY_HEADER, IdentityTokens, type CallerIdentity } from '@portal/platform';
import {
  TEST_SECRET,
  participant,
  startEmbeddedEvidence,
  type EmbeddedEvidence,
} from '../../services/evidence/test/support/embedded-evidence.js';
import { sendWithFetch } from '../src/outbox/fetch-sender';
import { flushOutbox, keepCapture, sendEntry } from '../src/outbox/runner';
import { getEntry, listEntries, updateEntry, type OutboxEntry } from '../src/outbox/store';

let server: EmbeddedEvidence;
const tokens = new IdentityTokens(TEST_SECRET);
const realFetch = globalThis.fetch;
/** Who the session of the requests belongs to (the gateway's part). */
let caller: CallerIdentity = participant('nobody');
/** Every request the outbox made: method, path and the tus offset it claimed. */
let requests: { method: string; path: string; offset: string | null }[] = [];

beforeAll(async () => {
  server = await startEmbeddedEvidence({ listen: true });
  const base = server.baseUrl!;
  // The page's origin (fetch-sender resolves the upload address against it).
  Object.assign(globalThis, { self: globalThis, location: new URL(base) });
  globalThis.fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, base);
    const headers = new Headers(init.headers);
    headers.set(IDENTITY_HEADER, await tokens.signCaller(caller));
    requests.push({
      method: init.method ?? 'GET',
      path: url.pathname,
      offset: headers.get('upload-offset'),
    });
    return realFetch(url, { ...init, headers });
  };
});
afterAll(async () => {
  // npm run test:unit runs files one after another in the same process: leave its globals as found.
  globalThis.fetch = realFetch;
  Reflect.deleteProperty(globalThis, 'self');
  Reflect.deleteProperty(globalThis, 'location');
  await server?.close();
});
beforeEach(() => {
  requests = [];
});

function capture(userId: string, overrides: Partial<OutboxEntry> = {}): OutboxEntry {
  const now = Date.now();
  return {
    id: randomUUID(),
    userId,
    createdAt: now,
    updatedAt: now,
    title: 'Seen on the way home',
    notes: 'a note written offline',
    location: null,
    file: null,
    fileName: null,
    fileType: null,
    size: 0,
    state: 'waiting',
    sent: 0,
    error: null,
    refused: false,
    uploadUrl: null,
    itemId: null,
    ...overrides,
  };
}

const itemsOf = async (userId: string) => (await server.handle.evidence.listOwn(participant(userId), {}, 100)).items;

describe('the outbox on the phone', () => {
  it("keeps captures per user, oldest first: one user's list never shows another's", async () => {
    const [ana, ben] = [`ana-${randomUUID()}`, `ben-${randomUUID()}`];
    const first = capture(ana, { createdAt: 1000, title: 'first' });
    const second = capture(ana, { createdAt: 2000, title: 'second' });
    expect(await keepCapture(second)).toBeNull();
    expect(await keepCapture(first)).toBeNull();
    await keepCapture(capture(ben, { title: "ben's" }));
    expect((await listEntries(ana)).map((entry) => entry.title)).toEqual(['first', 'second']);
    expect((await listEntries(ben)).map((entry) => entry.title)).toEqual(["ben's"]);
    // A file kept as a Blob survives as one (IndexedDB stores it structured-cloned).
    const withFile = capture(ana, {
      file: new Blob([new Uint8Array([1, 2, 3])]),
      fileName: 'x.bin',
      size: 3,
    });
    await keepCapture(withFile);
    expect((await getEntry(withFile.id))?.file?.size).toBe(3);
  });

  it("sends only the signed-in user's entries, and each of them once", async () => {
    const [cleo, dan] = [`cleo-${randomUUID()}`, `dan-${randomUUID()}`];
    const mine = [capture(cleo, { createdAt: 1, title: 'one' }), capture(cleo, { createdAt: 2, title: 'two' })];
    const theirs = capture(dan, { title: "dan's" });
    for (const entry of [...mine, theirs]) await keepCapture(entry);

    caller = participant(cleo);
    await flushOutbox(cleo);
    expect((await itemsOf(cleo)).map((item) => item.title).sort()).toEqual(['one', 'two']);
    expect(await itemsOf(dan)).toEqual([]);
    expect((await getEntry(theirs.id))?.state).toBe('waiting');
    for (const entry of mine)
      expect(await getEntry(entry.id)).toMatchObject({
        state: 'done',
        itemId: expect.any(String),
      });

    // Flushed again (the app reopened, the network came back): nothing is sent a second time.
    requests = [];
    await flushOutbox(cleo);
    expect(requests).toEqual([]);
    expect(await itemsOf(cleo)).toHaveLength(2);
  });

  it('never makes two items of one capture: not when sent twice at once, nor when the answer was lost and it is sent again', async () => {
    const eve = `eve-${randomUUID()}`;
    caller = participant(eve);
    const entry = capture(eve, { title: 'only once' });
    await keepCapture(entry);
    const [first, second] = await Promise.all([sendEntry(entry.id), sendEntry(entry.id)]);
    expect([first, second].filter((outcome) => outcome !== null)).toHaveLength(1);
    expect(await itemsOf(eve)).toHaveLength(1);

    // The server made the item but the phone never heard: the entry is waiting again and is resent.
    const itemId = (await getEntry(entry.id))!.itemId;
    await updateEntry(entry.id, { state: 'waiting', itemId: null });
    await flushOutbox(eve);
    expect(requests.filter((request) => request.method === 'POST')).toHaveLength(2);
    expect(await getEntry(entry.id)).toMatchObject({ state: 'done', itemId });
    expect(await itemsOf(eve)).toHaveLength(1);
  });

  it('resumes a cut-off upload at the offset the server has, and makes one item of it', async () => {
    const fay = `fay-${randomUUID()}`;
    caller = participant(fay);
    // A photo of more than one chunk (5 MiB), so that the upload can stop in between.
    const bytes = await sharp({
      create: {
        width: 1400,
        height: 1400,
        channels: 3,
        background: '#808080',
        noise: { type: 'gaussian', mean: 128, sigma: 60 },
      },
    })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(bytes.length).toBeGreaterThan(5 * 1024 * 1024);
    const entry = capture(fay, {
      file: new Blob([new Uint8Array(bytes)], { type: 'image/png' }),
      fileName: 'noise.png',
      fileType: 'image/png',
      size: bytes.length,
    });
    await keepCapture(entry);

    // The first attempt is cut off after its first chunk (the page closed, the network went).
    let uploadUrl: string | null = null;
    let stored = 0;
    const cutOff = new Error('cut off');
    await expect(
      sendWithFetch(entry, {
        onUploadUrl: (url) => void (uploadUrl = url),
        onStored: (bytesStored) => {
          stored = bytesStored;
          throw cutOff;
        },
      }),
    ).rejects.toBe(cutOff);
    expect(uploadUrl).not.toBeNull();
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(bytes.length);
    expect(await itemsOf(fay)).toEqual([]);

    // The next attempt asks where the upload is and sends the rest only.
    requests = [];
    const itemId = await sendWithFetch({ ...entry, uploadUrl }, { onUploadUrl: () => undefined, onStored: () => undefined });
    expect(requests[0]).toMatchObject({ method: 'HEAD', path: uploadUrl });
    const patches = requests.filter((request) => request.method === 'PATCH');
    expect(patches[0]?.offset).toBe(String(stored));
    expect(requests.some((request) => request.method === 'POST')).toBe(false);
    const items = await itemsOf(fay);
    expect(items.map((item) => item.id)).toEqual([itemId]);
    expect(items[0]).toMatchObject({ original_size: bytes.length });

    // Sent again from the start (the address forgotten): the idempotency key answers the same item.
    const again = await sendWithFetch(entry, {
      onUploadUrl: () => undefined,
      onStored: () => undefined,
    });
    expect(again).toBe(itemId);
    expect(await itemsOf(fay)).toHaveLength(1);
  });
});
