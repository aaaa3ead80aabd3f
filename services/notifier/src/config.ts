import { z } from 'zod';
import { parseEnv, sharedSecretEnv, sharedSecretOf, type SharedSecret } from '@portal/platform';

export interface NotifierSettings {
  dataDir: string;
  /** INTERNAL_SECRET signs and seals; INTERNAL_SECRET_PREVIOUS, during a rotation, is accepted when checking. */
  internalSecret: SharedSecret;
  /** SMTP server URL; without it every e-mail is written to DATA_DIR/outbox as an .eml file. */
  smtpUrl: string | null;
  from: string;
  productName: string;
  /** The portal's public address, for absolute links in e-mails. */
  publicUrl: string;
}

const notifierEnvSchema = z.object({
  DATA_DIR: z.string().default('./data'),
  ...sharedSecretEnv,
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().optional(),
  PRODUCT_NAME: z.string().default('The Investigation'),
  PUBLIC_URL: z.url({ error: 'must be the portal address, e.g. https://portal.example.org' }).optional(),
  /** The port the portal (its gateway) listens on: without PUBLIC_URL, links point at it on localhost. */
  PORT: z.string().regex(/^\d{1,5}$/).optional().catch(undefined),
});

/** PUBLIC_URL's default: the portal on this machine, at the port it listens on (PORT, else 8080). */
export function defaultPublicUrl(port: string | undefined): string {
  return `http://localhost:${port && Number(port) > 0 ? Number(port) : 8080}`;
}

export function notifierSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NotifierSettings {
  const parsed = parseEnv(notifierEnvSchema, env);
  const publicUrl = parsed.PUBLIC_URL ?? defaultPublicUrl(parsed.PORT);
  const host = new URL(publicUrl).hostname;
  return {
    dataDir: parsed.DATA_DIR,
    internalSecret: sharedSecretOf(parsed),
    smtpUrl: parsed.SMTP_URL ?? null,
    from: parsed.MAIL_FROM ?? `"${parsed.PRODUCT_NAME.replace(/"/g, '')}" <no-reply@${host.includes('.') ? host : 'localhost.localdomain'}>`,
    productName: parsed.PRODUCT_NAME,
    publicUrl: publicUrl.replace(/\/+$/, ''),
  };
}
