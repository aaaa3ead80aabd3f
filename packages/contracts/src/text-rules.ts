/// <reference path="./unicode-data.d.ts" />
import scriptAliases from 'unicode-match-property-value-ecmascript/data/mappings.js';

/**
 * Rules for text that people type and the portal repeats: in e-mails and text messages (names,
 * places, notes), or in public beside evidence (usernames). One module, used by the shared zod
 * fields, so that the browser, registration, the availability check, the profile, the
 * administrators' edit and the box office's import all say the same.
 */

/**
 * Characters that end a line or change how the text around them is shown, and that no name,
 * place or note needs: controls (C0 and C1, tab, CR and LF among them), line and paragraph
 * separators, and format characters (bidirectional overrides and isolates, the byte-order mark,
 * invisible operators, the soft hyphen, tag characters). Zero-width joiner and non-joiner stay:
 * Persian, Indic and emoji spelling need them, and they start no line and reverse nothing.
 */
const LINE_BREAKING_OR_FORMAT = /[\p{Cc}\p{Zl}\p{Zp}\p{Cf}]/u;
const JOINERS = new Set(['\u200c', '\u200d']);

/** The first character of `text` that a one-line text may not hold, or null. */
export function forbiddenInLine(text: string): string | null {
  for (const char of text) {
    if (LINE_BREAKING_OR_FORMAT.test(char) && !JOINERS.has(char)) return char;
  }
  return null;
}

/** "U+000A" for a character: how a refusal names an invisible one. */
export function codePointName(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * One line of text as a message repeats it: controls, line breaks and format characters become
 * spaces and runs of spaces one. The notifier renders every value a person typed through it, so
 * that text stored before the fields refused these characters still cannot start a line of its own.
 */
export function asOneLine(text: string): string {
  let out = '';
  for (const char of text) out += LINE_BREAKING_OR_FORMAT.test(char) && !JOINERS.has(char) ? ' ' : char;
  return out.replace(/\s+/g, ' ').trim();
}

// --- usernames -------------------------------------------------------------------------------

/**
 * Code points that show nothing (Unicode's Default_Ignorable_Code_Point: variation selectors,
 * the combining grapheme joiner, Mongolian free variation selectors, Khmer inherent vowels, tag
 * characters, zero-width characters) and the Hangul fillers (some fonts draw nothing for them
 * either; most are Default_Ignorable too, the list says all four for older Unicode data).
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\u115F\u1160\u3164\uFFA0]/u;

/** The scripts of the Unicode data this runtime's regular expressions know (lazily: only usernames need them). */
let scriptTests: { name: string; test: RegExp }[] | undefined;
function scriptsOf(char: string): Set<string> {
  if (!scriptTests) {
    const names = new Set(scriptAliases.get('Script_Extensions')!.values());
    scriptTests = [];
    for (const name of names) {
      try {
        scriptTests.push({ name, test: new RegExp(`^\\p{Script_Extensions=${name}}$`, 'u') });
      } catch {
        // A script newer than this runtime's Unicode data: no character of it can be told here.
      }
    }
  }
  return new Set(scriptTests.filter(({ test }) => test.test(char)).map(({ name }) => name));
}

/**
 * UTS #39 section 5.1's augmented script sets: Han is also Japanese, Korean and Han with
 * Bopomofo; Hiragana and Katakana are Japanese; Hangul is Korean; Bopomofo is Han with Bopomofo.
 */
function augmented(scripts: Set<string>): Set<string> {
  const out = new Set(scripts);
  if (scripts.has('Han')) ['Jpan', 'Kore', 'Hanb'].forEach((name) => out.add(name));
  if (scripts.has('Hiragana') || scripts.has('Katakana')) out.add('Jpan');
  if (scripts.has('Hangul')) out.add('Kore');
  if (scripts.has('Bopomofo')) out.add('Hanb');
  return out;
}

/**
 * Whether the name is "highly restrictive" in the sense of UTS #39 section 5.2: every letter of
 * one script (characters common to all scripts, such as digits, '.', '_' and '-', and combining
 * marks inherit their neighbours'), or Latin with Han and Hiragana/Katakana (Japanese), with Han and
 * Bopomofo, or with Han and Hangul (Korean). 'раураl' (Cyrillic with a Latin l) and 'pаypal' are not.
 */
export function isSingleScript(name: string): boolean {
  let resolved: Set<string> | undefined;
  let withoutLatin: Set<string> | undefined;
  const meet = (a: Set<string> | undefined, b: Set<string>) => (a ? new Set([...a].filter((script) => b.has(script))) : b);
  for (const char of new Set(name)) {
    const scripts = scriptsOf(char);
    if (scripts.size === 0 || scripts.has('Common') || scripts.has('Inherited')) continue;
    const set = augmented(scripts);
    resolved = meet(resolved, set);
    if (!scripts.has('Latin')) withoutLatin = meet(withoutLatin, set);
  }
  if (!resolved || resolved.size > 0) return true;
  const others = withoutLatin;
  return others !== undefined && ['Jpan', 'Hanb', 'Kore'].some((script) => others.has(script));
}

/**
 * A lowercase letter with no capital (Latin's small capitals such as 'ᴀ' in 'sec_ᴀdmin', IPA and
 * phonetic letters): technical characters outside UTS #39's identifier profile that read as an
 * ordinary letter. Letters of every modern alphabet with case have a capital; letters of scripts
 * without case are not lowercase letters at all.
 */
const CASELESS_LOWERCASE = /(?=\p{Ll})\P{Changes_When_Uppercased}/u;

/**
 * Why a username (already NFC, checked for its characters by the field's pattern) cannot be
 * used, or null: invisible characters, letters of several scripts, technical look-alike letters.
 */
export function usernameProblem(name: string): string | null {
  if (INVISIBLE.test(name)) return 'Username must not contain invisible characters';
  if (CASELESS_LOWERCASE.test(name)) return 'Username must use the letters of an alphabet, not phonetic or small-capital letters';
  if (!isSingleScript(name.normalize('NFKC')))
    return 'Username must use the letters of one alphabet (digits, dots, dashes and underscores go with any)';
  return null;
}

/**
 * NFKC with full case folding, the form two names are compared in before their look-alike
 * skeletons: 'ｂａｒｓ_ａｄｍｉｎ' (fullwidth) and 'BARS_ADMIN' are 'bars_admin', 'Straße' is
 * 'strasse'. Upper then lower case applies the full folds (ß to ss, final sigma to sigma) that
 * toLowerCase alone leaves.
 */
export function foldedName(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
