import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_ROUTES, routeHtmlFile } from '@portal/contracts';
import { readPagesOfRoutes } from '../../web/build/route-preloads.js';

const WEB = join(import.meta.dirname, '../../web');
const PAGES_FILE = join(WEB, 'src/app/pages.ts');

describe("the build's route copies of index.html (web/build/route-preloads.ts)", () => {
  it("reads every client route's page from the app's route table", () => {
    const routes = readPagesOfRoutes(readFileSync(PAGES_FILE, 'utf8'), PAGES_FILE);
    expect([...routes.keys()].sort()).toEqual([...CLIENT_ROUTES].sort());
    expect(routes.get('/archive')).toBe(join(WEB, 'src/pages/archive/ArchivePage'));
    for (const module of routes.values()) expect(existsSync(`${module}.tsx`) || existsSync(`${module}.ts`), module).toBe(true);
  });

  it('names each route its own file, the root included', () => {
    expect(routeHtmlFile('/')).toBe('route-html/root.html');
    expect(routeHtmlFile('/home')).toBe('route-html/home.html');
    expect(routeHtmlFile('/Evidence')).toBe('route-html/Evidence.html');
    expect(new Set(CLIENT_ROUTES.map(routeHtmlFile)).size).toBe(CLIENT_ROUTES.length);
  });

  it.runIf(existsSync(join(WEB, 'dist/index.html')))('the build preloads, for each route, its page and what only the page needs', () => {
    const shell = readFileSync(join(WEB, 'dist/index.html'), 'utf8');
    const archive = readFileSync(join(WEB, 'dist', routeHtmlFile('/archive')), 'utf8');
    const preloads = (html: string) => [...html.matchAll(/rel="modulepreload" crossorigin href="([^"]+)"/g)].map((m) => m[1]!);
    const added = preloads(archive).filter((file) => !preloads(shell).includes(file));
    expect(added.some((file) => /\/assets\/ArchivePage-[\w-]+\.js$/.test(file))).toBe(true);
    for (const file of added) expect(existsSync(join(WEB, 'dist', file)), file).toBe(true);
    // The same page otherwise: only the preloads and the first screen's styles differ
    // (web/build/first-screen-styles.ts: each route its own, index.html those every page has).
    // The archive also asks for its first page with the HTML (that the app's fetch takes it, one
    // request in all, is checked in Chromium: tests/e2e/first-screen-styles.test.ts).
    const firstPage = /<link rel="preload" href="\/api\/evidence\/public\?limit=\d+" as="fetch" crossorigin="anonymous">/;
    expect(archive).toMatch(firstPage);
    expect(shell).not.toMatch(firstPage);
    const rest = (html: string) =>
      html
        .replace(/\s*<link rel="modulepreload"[^>]*>/g, '')
        .replace(firstPage, '')
        .replace(/\s*<style data-emotion="css [^"]*">[^<]*<\/style>/g, '');
    expect(rest(archive)).toBe(rest(shell));
    const emotionNames = (html: string) => /<style data-emotion="css ([^"]*)">/.exec(html)?.[1]?.split(' ') ?? [];
    expect(emotionNames(shell).length).toBeGreaterThan(10);
    expect(emotionNames(archive).length).toBeGreaterThan(emotionNames(shell).length);
    for (const name of emotionNames(archive)) expect(archive).toContain(`.css-${name}`);
  });
});
