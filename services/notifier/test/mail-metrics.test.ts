import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SqliteEventBus, SqliteJobQueue } from '@portal/platform';
import { notifierSettingsFromEnv } from '../src/config.js';
import { MAIL_KINDS, type MailJob } from '../src/emails/mail-job.js';
import { createNotifier } from '../src/service.js';

const root = mkdtempSync(join(tmpdir(), 'notifier-metrics-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the notifier’s mail counters', () => {
  // The alert PortalMailRefused compares failures with successes (k8s/components/prometheus-operator):
  // a counter series that only appears with its first success left it blind until then.
  it('export every kind of e-mail at 0 before the first one is sent or fails', async () => {
    const logger = pino({ level: 'silent' });
    const bus = new SqliteEventBus({ file: join(root, 'bus.sqlite'), logger, pollIntervalMs: 50 });
    const mail = new SqliteJobQueue<MailJob>({ file: join(root, 'jobs.sqlite'), queue: 'mail', logger, pollIntervalMs: 50 });
    const notifier = createNotifier(notifierSettingsFromEnv({ INTERNAL_SECRET: 'x'.repeat(48), DATA_DIR: root }), { bus, mail, logger });
    const text = await notifier.metrics.text();
    expect(MAIL_KINDS).toEqual(['reset-code', 'verify-email', 'account-notice', 'moderation-digest']);
    for (const kind of MAIL_KINDS) {
      expect(text).toContain(`portal_emails_sent_total{kind="${kind}",service="notifier"} 0`);
      expect(text).toContain(`portal_emails_failed_total{kind="${kind}",service="notifier"} 0`);
    }
    await notifier.mailer.close();
    await mail.close();
    await bus.close();
  });
});
