import { describe, expect, it } from 'vitest';
import { notifierSettingsFromEnv } from '../src/config.js';

const SECRET = 'x'.repeat(32);

describe('PUBLIC_URL', () => {
  it('defaults to the port the portal listens on, so that e-mailed links work with another PORT', () => {
    expect(notifierSettingsFromEnv({ INTERNAL_SECRET: SECRET, PORT: '9090' }).publicUrl).toBe('http://localhost:9090');
    expect(notifierSettingsFromEnv({ INTERNAL_SECRET: SECRET }).publicUrl).toBe('http://localhost:8080');
    // Port 0 (a free one, chosen at start) says nothing useful: the usual default.
    expect(notifierSettingsFromEnv({ INTERNAL_SECRET: SECRET, PORT: '0' }).publicUrl).toBe('http://localhost:8080');
  });

  it('is taken as given when set, without a trailing slash', () => {
    expect(notifierSettingsFromEnv({ INTERNAL_SECRET: SECRET, PORT: '9090', PUBLIC_URL: 'https://portal.example.org/' }).publicUrl).toBe(
      'https://portal.example.org',
    );
  });
});
