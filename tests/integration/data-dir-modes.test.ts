// Files under DATA_DIR are the portal's alone: the e-mail outbox (reset codes, confirmation
// links), the SQLite databases, the blobs (verification photos, originals) and the upload folders.
// The data folder is 0700 and everything the portal writes is 0600 (folders 0700), in the
// all-in-one process and in each service run as a process of its own.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTypeScript, waitFor } from '@portal/platform/testing';
import { newParticipant } from '../support/accounts.js';
import { ApiClient } from '../support/api-client.js';
import { uploadEvidence, waitForMedia } from '../support/evidence.js';
import { freePort } from '../support/free-port.js';
import { phoneJpeg } from '../support/media.js';
import { waitForMail } from '../support/outbox.js';
import { startPortalProcess, type PortalProcess } from '../support/portal-process.js';

/** Every entry under `root` (itself included) whose mode lets another account read, write or enter it. */
function openToOthers(root: string): string[] {
  const open: string[] = [];
  const visit = (path: string) => {
    const stat = statSync(path);
    if ((stat.mode & 0o077) !== 0) open.push(`${relative(root, path) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return open;
}

function countFiles(root: string): number {
  return readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'data-dir-modes-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the data folder', () => {
  let portal: PortalProcess | undefined;
  afterAll(() => portal?.stop());

  it('is 0700 and every file the all-in-one portal writes in it is 0600: outbox, databases, blobs, uploads', async () => {
    // A data folder an earlier version (or an operator) left open is narrowed at start.
    const dataDir = join(scratch, 'all-in-one');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    portal = await startPortalProcess(dataDir, { PUBLIC_URL: 'https://portal.example.org' });
    const { client, user } = await newParticipant(portal.url);
    // E-mails: a password-reset code lands in the outbox.
    expect((await new ApiClient(portal.url).post('/api/email/send', { email: user.email })).status).toBe(200);
    await waitForMail(dataDir, user.email, { subject: /reset code/ });
    // A multipart upload, processed by the media worker.
    const photo = join(scratch, 'photo.jpg');
    writeFileSync(photo, await phoneJpeg());
    const uploaded = await uploadEvidence(client, photo);
    expect(uploaded.status).toBe(201);
    expect((await waitForMedia(client, uploaded.data.id)).media_status).toBe('ready');
    // A resumable upload left unfinished: its file and metadata stay in the upload folder.
    const created = await client.request('POST', '/api/evidence/uploads', {
      headers: {
        'tus-resumable': '1.0.0',
        'upload-length': '1000',
        'upload-metadata': `title ${Buffer.from('half').toString('base64')},filetype ${Buffer.from('video/mp4').toString('base64')}`,
      },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    const patched = await fetch(new URL(location, portal.url), {
      method: 'PATCH',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        cookie: [...client.cookies].map(([cookie, value]) => `${cookie}=${value}`).join('; '),
      },
      body: new Uint8Array(500).fill(1),
    });
    expect(patched.status).toBe(204);

    expect(countFiles(dataDir)).toBeGreaterThan(10);
    expect(openToOthers(dataDir)).toEqual([]);
  }, 120_000);
});

const SERVICES = {
  identity: {
    main: 'services/identity/src/main.ts',
    env: (port: number) => ({ IDENTITY_HOST: '127.0.0.1', IDENTITY_PORT: String(port) }),
    ready: /identity listening/,
  },
  evidence: {
    main: 'services/evidence/src/main.ts',
    env: (port: number) => ({ EVIDENCE_HOST: '127.0.0.1', EVIDENCE_PORT: String(port) }),
    ready: /evidence listening/,
  },
  'media-worker': {
    main: 'services/media-worker/src/main.ts',
    env: (port: number) => ({ HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(port) }),
    ready: /health endpoints listening/,
  },
  notifier: {
    main: 'services/notifier/src/main.ts',
    env: (port: number) => ({ HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(port) }),
    ready: /health endpoints listening/,
  },
} as const;

describe('the data folder of a service run alone', () => {
  it.each(Object.keys(SERVICES) as (keyof typeof SERVICES)[])(
    'is 0700 with every file 0600 (%s)',
    async (name) => {
      const service = SERVICES[name];
      const dataDir = join(scratch, name);
      const child = runTypeScript(fileURLToPath(new URL(`../../${service.main}`, import.meta.url)), [], {
        DATA_DIR: dataDir,
        INTERNAL_SECRET: 'a-shared-secret-that-is-long-enough-0123',
        LOG_LEVEL: 'info',
        ...service.env(await freePort()),
      });
      try {
        await child.waitForLine(service.ready, 60_000);
        await waitFor(() => countFiles(dataDir) > 0, { what: `${name} to write under DATA_DIR` });
        expect(openToOthers(dataDir)).toEqual([]);
      } finally {
        child.child.kill('SIGTERM');
        if (child.child.exitCode === null) await new Promise((resolve) => child.child.once('exit', resolve));
      }
    },
    90_000,
  );
});
