// axe-core (WCAG 2 A and AA rules) run inside a page of the browser tests.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string; failureSummary?: string }[];
}

/** axe's WCAG 2 A/AA violations on the page as it is now, one line each. */
export async function violations(page: Page): Promise<string[]> {
  // After every transition (a dialog fading in, a ripple): half-way colours are no measure.
  await page.evaluate(async () => {
    const ending = document.getAnimations().filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity);
    await Promise.all(ending.map((animation) => animation.finished.catch(() => undefined)));
  });
  // Evaluated through the DevTools protocol: the portal's CSP (script-src 'self') would refuse a script tag.
  await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations;
  });
  return found.map(
    (violation) =>
      `${page.url()} ${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => `${node.target.join(' ')} ${node.html.slice(0, 120)} (${node.failureSummary ?? ''})`).join(', ')}`,
  );
}
