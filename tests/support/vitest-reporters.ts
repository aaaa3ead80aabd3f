// Reporters shared by the three vitest configurations. With TEST_REPORT_DIR set (CI sets it),
// each run also writes vitest's JSON report there, named after the suite, so that
// scripts/test-summary.mjs can add up every suite's counts into one closing line.
export function reporters(suite: string): { reporters: string[]; outputFile?: Record<string, string> } {
  const dir = process.env.TEST_REPORT_DIR;
  if (!dir) return { reporters: ['default'] };
  return { reporters: ['default', 'json'], outputFile: { json: `${dir}/${suite}.vitest.json` } };
}
