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
    // The same page otherwise: only the preload links differ.
    expect(archive.replace(/\s*<link rel="modulepreload"[^>]*>/g, '')).toBe(shell.replace(/\s*<link rel="modulepreload"[^>]*>/g, ''));
  });
});
