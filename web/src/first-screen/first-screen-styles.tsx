/**
 * Run by the build in Node, never in the browser (build/first-screen-styles.ts): renders a route's
 * first screens with a static router and answers the styles emotion made for them, so that the
 * build can put them in that route's HTML.
 *
 * Why: in the browser, emotion compiles (stylis) and inserts the styles of every component of the
 * first screen inside React's first commit, one long task on a phone. A style already in the page
 * (`<style data-emotion="css name1 name2 …">`) is taken by emotion's cache as inserted: the first
 * commit only looks it up. A style not in the page is made in the browser as before, so a screen
 * rendered differently here (another user, other data) costs time, never correctness.
 */
import createCache from '@emotion/cache';
import { CacheProvider } from '@emotion/react';
import { QueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { prerenderToNodeStream } from 'react-dom/static';
import { StaticRouter } from 'react-router';
import { DEFAULT_TERMS_TEXT, DEFAULT_TERMS_VERSION, type Evidence, type MediaType, type PublicConfig, type User } from '@portal/contracts';
import { firstPageUrl, type EvidenceScope, type ListPage } from '../api/evidence';
import { App } from '../app/App';
import { CURRENT_USER_KEY } from '../auth/useCurrentUser';
import { PUBLIC_CONFIG_KEY } from '../config/usePublicConfig';
import { evidenceListKey } from '../evidence/queries';

/** emotion's key for the app's styles: the browser's default cache, class names `css-<name>`. */
export const EMOTION_KEY = 'css';

/** Who is looking, for a first screen: nobody known yet, a visitor, or a participant. */
export type FirstScreenViewer = 'loading' | 'visitor' | 'participant';

/** What the lists of evidence hold: not answered yet, nothing, or an item of each media type. */
export type FirstScreenEvidence = 'loading' | 'none' | 'some';

/**
 * A configuration of the shape GET /api/config answers. Its words are not shown to anyone; what
 * matters for the styles is which parts are there (links, videos, terms).
 */
const CONFIG: PublicConfig = {
  productName: 'Evidence Portal',
  streetCorner: 'the street corner',
  libraryEntryway: 'the library entryway',
  arriveEarly: 'ten minutes early',
  publicAfterDate: 'the end of the festival',
  spyOnUrl: 'https://example.org/',
  ticketUrl: 'https://example.org/tickets',
  publicLocationDecimals: 3,
  onboardingVideo: { url: '/onboarding/onboarding.mp4', captionsUrl: '/onboarding/onboarding.en.vtt' },
  tutorialVideo: { url: '/onboarding/onboarding.mp4', captionsUrl: '/onboarding/onboarding.en.vtt' },
  terms: { version: DEFAULT_TERMS_VERSION, text: DEFAULT_TERMS_TEXT, url: null },
};

const PARTICIPANT: User = {
  id: 'first-screen',
  username: 'participant',
  full_name: 'A Participant',
  email: 'participant@example.org',
  phone_number: '5550000000',
  pronouns: 'They/Them',
  role: 1,
  verification_photo: true,
  verification_photo_AWS_URL: null,
  avatar_AWS_URL: null,
  video_watched: true,
  email_verified: true,
  created_at: '2026-01-01T00:00:00.000Z',
  terms_version: DEFAULT_TERMS_VERSION,
  terms_accepted_at: '2026-01-01T00:00:00.000Z',
  sms_reminders: true,
};

function sampleEvidence(media_type: MediaType): Evidence {
  const picture = media_type === 2 || media_type === 3;
  return {
    id: `first-screen-${media_type}`,
    title: 'Supporting Evidence',
    notes: 'Seen at the corner.',
    location: null,
    media_type,
    aws_url: media_type === 1 ? null : '/first-screen/media',
    thumbnail_url: picture ? '/first-screen/thumbnail.webp' : null,
    poster_url: media_type === 3 ? '/first-screen/poster.webp' : null,
    placeholder: null,
    width: picture ? 1600 : null,
    height: picture ? 1200 : null,
    duration: media_type >= 3 ? 42 : null,
    media_status: media_type === 1 ? 'none' : 'ready',
    media_error: null,
    is_public: true,
    faces: picture ? { check: 'done', count: 0, consent: false, public_copy: 'plain' } : null,
    review_status: 'reviewed',
    date_posted: '2026-01-01T00:00:00.000Z',
    user_id: PARTICIPANT.id,
    username: PARTICIPANT.username,
    avatar_AWS_URL: null,
  };
}

/** The unfiltered lists a first screen shows: the archive, and a participant's own. */
function seedLists(client: QueryClient, viewer: FirstScreenViewer, evidence: FirstScreenEvidence): void {
  if (evidence === 'loading') return;
  const items = evidence === 'some' ? ([1, 2, 3, 4] as const).map(sampleEvidence) : [];
  const scopes: EvidenceScope[] = viewer === 'participant' ? [{ kind: 'public' }, { kind: 'own' }] : [{ kind: 'public' }];
  for (const scope of scopes) {
    const page: ListPage<Evidence> = { items, next: null };
    client.setQueryData(evidenceListKey(scope, null), { pages: [page], pageParams: [firstPageUrl(scope, null)] });
  }
}

function clientFor(viewer: FirstScreenViewer, evidence: FirstScreenEvidence): QueryClient {
  // Nothing is fetched while rendering on the server; the answers a screen waits for are given.
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  if (viewer !== 'loading') {
    client.setQueryData(PUBLIC_CONFIG_KEY, CONFIG);
    client.setQueryData(CURRENT_USER_KEY, viewer === 'participant' ? PARTICIPANT : null);
    seedLists(client, viewer, evidence);
  }
  return client;
}

/**
 * The styles of `route`'s first screen for `viewer`: emotion's names and the CSS of each, in
 * the order emotion made them. Global styles (CssBaseline) are left out: emotion's Global
 * component keeps its own sheet and does not look in the cache.
 */
export async function firstScreenStyles(
  route: string,
  viewer: FirstScreenViewer,
  evidence: FirstScreenEvidence,
): Promise<Map<string, string>> {
  const cache = createCache({ key: EMOTION_KEY });
  // Compat mode (what @emotion/server uses): the cache keeps each style's CSS under its name
  // instead of writing it into the rendered HTML.
  cache.compat = true;
  const Router = ({ children }: { children: ReactNode }) => <StaticRouter location={route}>{children}</StaticRouter>;
  const errors: unknown[] = [];
  // A guard that sends the viewer on (<Navigate>) draws nothing here, and react-router warns that
  // a static router cannot follow it: expected, so not printed.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('<Navigate> must not be used on the initial render in a <StaticRouter>')) return;
    warn(...args);
  };
  let rendered;
  try {
    rendered = await prerenderToNodeStream(
      <CacheProvider value={cache}>
        <App queryClient={clientFor(viewer, evidence)} Router={Router} />
      </CacheProvider>,
      { onError: (error) => void errors.push(error) },
    );
    // The HTML itself is not used: the app renders in the browser (createRoot, not hydration).
    for await (const chunk of rendered.prelude) void chunk;
  } finally {
    console.warn = warn;
  }
  if (errors.length > 0) {
    throw new Error(
      `rendering ${route} for a ${viewer} (evidence: ${evidence}) failed: ${errors.map((error) => (error instanceof Error ? error.stack : String(error))).join('\n')}`,
    );
  }
  const styles = new Map<string, string>();
  for (const [name, css] of Object.entries(cache.inserted)) {
    if (typeof css === 'string' && css.includes(`.${EMOTION_KEY}-${name}`)) styles.set(name, css);
  }
  return styles;
}
