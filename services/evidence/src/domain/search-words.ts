import { badRequest } from '@portal/platform';

/** The most words one search may have. */
export const MAX_SEARCH_WORDS = 12;

/**
 * The words of a text as search compares them: letters and digits only, lower case, accents
 * removed ("Café-Bar 2" → cafe, bar, 2), each once. The same rule makes an item's terms and a
 * query's words, so that every repository finds the same items (SQLite's FTS5 tokenizer
 * `unicode61 remove_diacritics 2` splits and folds text the same way).
 */
export function searchWords(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return [...new Set(folded.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0))];
}

/** A search's words (undefined: no search); too many is a clear 400 rather than a slow query. */
export function wordsOf(q: string | undefined): string[] | undefined {
  if (q === undefined) return undefined;
  const words = searchWords(q);
  if (words.length > MAX_SEARCH_WORDS) {
    const message = `Search for at most ${MAX_SEARCH_WORDS} words at once`;
    throw badRequest(message, { q: message });
  }
  return words;
}
