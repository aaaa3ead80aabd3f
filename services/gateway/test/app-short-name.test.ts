import { describe, expect, it } from 'vitest';
import { appShortName } from '../src/web/app-short-name.js';
import { webAppManifest } from '../src/http/plugins/web-app.js';

describe('the installable app short name', () => {
  it('keeps a name that fits, and otherwise whole words, never half of one', () => {
    expect(appShortName('Night Watch')).toBe('Night Watch');
    expect(appShortName('The Investigation')).toBe('Investigation');
    expect(appShortName('Operation Test')).toBe('Operation');
    expect(appShortName('The Big Quiet Harbour Project')).toBe('Big Quiet');
    expect(appShortName('  Spaced   Out   Name  ')).toBe('Spaced Out');
    expect(appShortName('Extraordinarily Long')).toBe('Extraordinarily');
  });

  it('is what the manifest says, unless PRODUCT_SHORT_NAME sets it', () => {
    expect(webAppManifest('The Investigation').short_name).toBe('Investigation');
    expect(webAppManifest('The Investigation', 'Inquiry').short_name).toBe('Inquiry');
  });
});
