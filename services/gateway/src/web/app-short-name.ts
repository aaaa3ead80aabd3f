/** What a phone's home screen shows of an app's name before it cuts it (the manifest's short_name). */
export const SHORT_NAME_LENGTH = 12;

const LEADING_ARTICLE = /^(?:the|a|an)$/i;

/**
 * The installable app's short name from the product's name, in whole words: the name itself when
 * it fits; else, without a leading article, as many words from the start as fit; a first word
 * longer than that stays whole (the home screen may cut it, but the manifest never names the app
 * with half a word). PRODUCT_SHORT_NAME sets it outright.
 */
export function appShortName(productName: string): string {
  const name = productName.trim().replace(/\s+/g, ' ');
  if (name.length <= SHORT_NAME_LENGTH) return name;
  const words = name.split(' ');
  if (words.length > 1 && LEADING_ARTICLE.test(words[0]!)) words.shift();
  let shortName = words[0]!;
  for (const word of words.slice(1)) {
    if (`${shortName} ${word}`.length > SHORT_NAME_LENGTH) break;
    shortName = `${shortName} ${word}`;
  }
  return shortName;
}
