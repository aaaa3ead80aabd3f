// The keys under which usernames are unique, so that 'Zoë' and 'ZOË', 'paypal' and 'раураl'
// (Cyrillic), or 'nightowl' and 'nightowI' (a capital I), cannot be two accounts. Built on the
// skeleton of Unicode TR39 (section 4, "Confusable Detection"): NFD, each character replaced by
// its prototype in Unicode's confusables table, NFD again; the table comes from unhomoglyph
// (confusables.txt as data). TR39's skeleton keeps case on purpose ('I' looks like 'l', 'i' does
// not), and usernames are also unique regardless of case, so a name has two keys, each unique:
// - `key`: the skeleton of the name in lower case (the same name in any case; lookups use it);
// - `look`: the skeleton of the name as written, lower-cased after (what the name looks like).
// Two names clash when either key does. Limits: case pairs whose skeletons differ (all-capital
// 'NIGHTOWL' against 'nightowI') are not caught; neither look like the other on screen.
// Before the skeleton, a name is folded with NFKC (and, for `key`, full case folding: `foldedName`,
// shared with the username field in packages/contracts): 'ｂａｒｓ_ａｄｍｉｎ' (fullwidth) is
// 'bars_admin'. The field itself refuses what no key can fold away: invisible characters, several
// scripts in one name, small-capital and phonetic letters (text-rules.ts; docs/decisions/0039).
import unhomoglyph from 'unhomoglyph';
import { foldedName } from '@portal/contracts';

function skeleton(text: string): string {
  return unhomoglyph(text.normalize('NFD')).normalize('NFD');
}

function folded(text: string): string {
  return skeleton(skeleton(text).toLowerCase()).toLowerCase();
}

/** The lookup and uniqueness key of a username (case folded): never shown, stored beside the name. */
export function usernameKey(username: string): string {
  return folded(foldedName(username.trim()));
}

/** The second uniqueness key: what the name looks like as written. */
export function usernameLook(username: string): string {
  return folded(username.trim().normalize('NFKC'));
}
