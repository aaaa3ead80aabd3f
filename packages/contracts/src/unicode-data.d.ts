/** The property value aliases of unicode-match-property-value-ecmascript: property name → (alias → canonical value). */
declare module 'unicode-match-property-value-ecmascript/data/mappings.js' {
  const mappings: Map<string, Map<string, string>>;
  export default mappings;
}
