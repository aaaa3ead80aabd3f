// The key under which usernames are unique: case and look-alike characters folded, so that
// 'Zoë' and 'ZOË', or 'paypal' and 'раураl' (Cyrillic), or 'nightowl' and 'nightowI', cannot be
// two accounts. The skeleton of Unicode TR39 (section 4, "Confusable Detection"): NFD, each
// character replaced by its prototype in the Unicode confusables table, NFD again; the mapping
// comes from unhomoglyph (confusables.txt, maintained as a package), and case is folded around it
// (TR39's skeleton keeps case: 'I' and 'l' look alike, 'i' and 'l' do not, so the skeleton is taken
// before lower-casing, then once more after it, for what lower-casing makes).
import unhomoglyph from 'unhomoglyph';

function skeleton(text: string): string {
  return unhomoglyph(text.normalize('NFD')).normalize('NFD');
}

/** The uniqueness key of a username (never shown; stored beside the name). */
export function usernameKey(username: string): string {
  return skeleton(skeleton(username.trim()).toLowerCase()).toLowerCase();
}
