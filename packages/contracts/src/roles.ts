// Plain constants (no zod here), so that code needing only these stays small in the browser.

export const ROLE_USER = 1;
export const ROLE_ADMIN = 2;

/** Role 1 is a participant; every other role value is an administrator (SPEC section 3). */
export function isAdminRole(role: number): boolean {
  return role !== ROLE_USER;
}

export const PRONOUN_OPTIONS = ['', 'He/Him', 'She/Her', 'They/Them', 'Other'] as const;
export type Pronouns = (typeof PRONOUN_OPTIONS)[number];
