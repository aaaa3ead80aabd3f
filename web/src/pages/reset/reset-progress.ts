/**
 * What the three reset screens hand on to each other: the e-mail address, then the code once the
 * server said it matches. Kept in memory and mirrored to sessionStorage (this tab only, gone when
 * it closes) so that a reload in the middle of the flow does not start it again. Never the
 * password.
 */
export interface ResetProgress {
  email: string;
  /** Set only after POST /api/email/check/reset-code answered codeMatches: true. */
  verifiedCode?: string;
}

const KEY = 'portal.password-reset';
let inMemory: ResetProgress | null = null;

function fromStorage(): ResetProgress | null {
  try {
    const stored: unknown = JSON.parse(window.sessionStorage.getItem(KEY) ?? 'null');
    if (typeof stored !== 'object' || stored === null) return null;
    const { email, verifiedCode } = stored as Record<string, unknown>;
    if (typeof email !== 'string') return null;
    return typeof verifiedCode === 'string' ? { email, verifiedCode } : { email };
  } catch {
    return null;
  }
}

export function readResetProgress(): ResetProgress | null {
  return inMemory ?? fromStorage();
}

export function saveResetProgress(progress: ResetProgress): void {
  inMemory = progress;
  try {
    window.sessionStorage.setItem(KEY, JSON.stringify(progress));
  } catch {
    // Storage refused (private mode, quota): the copy in memory still carries the flow.
  }
}

export function clearResetProgress(): void {
  inMemory = null;
  try {
    window.sessionStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}
