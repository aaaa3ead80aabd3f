/**
 * Which suites may report themselves skipped. On a developer's machine a suite whose prerequisite
 * is missing (Chromium, an ffmpeg build, an infrastructure server) is skipped and says why. CI
 * sets PORTAL_TESTS_REQUIRED=1: there every suite is part of the proof, so a missing prerequisite
 * fails the run with the same reason instead of turning it green with fewer tests.
 */
export const everySuiteRequired = process.env.PORTAL_TESTS_REQUIRED === '1';

/** Throws when every suite is required; otherwise lets the caller skip its suite. */
export function requirePrerequisite(missing: string): void {
  if (everySuiteRequired) {
    throw new Error(
      `A required suite cannot run: ${missing.replace(/\.\s*$/, '')}. (PORTAL_TESTS_REQUIRED=1: CI runs every suite; install what is missing.)`,
    );
  }
}
