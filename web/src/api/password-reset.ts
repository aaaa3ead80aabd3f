// The password-reset calls (SPEC section 7). The server makes the six-digit code and e-mails it;
// the browser only ever sends the e-mail address, then the code the person typed.
import { apiRequest } from './http';

export interface ResetAnswer {
  ok: true;
  message: string;
}

/** POST /api/email/check-email: whether an account has this address. */
export function checkResetEmail(email: string): Promise<{ exists: boolean }> {
  return apiRequest<{ exists: boolean }>('/api/email/check-email', { method: 'POST', json: { email } });
}

/** POST /api/email/send: a code for this address (404 when no account has it, 429 when asked too often). */
export function sendResetCode(email: string): Promise<ResetAnswer> {
  return apiRequest<ResetAnswer>('/api/email/send', { method: 'POST', json: { email } });
}

/** PUT /api/email/reset-code: another code, which replaces the one sent before. */
export function requestAnotherResetCode(email: string): Promise<ResetAnswer> {
  return apiRequest<ResetAnswer>('/api/email/reset-code', { method: 'PUT', json: { email } });
}

/** POST /api/email/check/reset-code: whether the code is the live one (a wrong code uses up a try). */
export function checkResetCode(email: string, code: string): Promise<{ codeMatches: boolean }> {
  return apiRequest<{ codeMatches: boolean }>('/api/email/check/reset-code', { method: 'POST', json: { email, code } });
}

/** PUT /api/user/passwordupdated: the new password; every session of the account ends. */
export function updatePasswordWithCode(email: string, code: string, password: string): Promise<ResetAnswer> {
  return apiRequest<ResetAnswer>('/api/user/passwordupdated', { method: 'PUT', json: { email, code, password } });
}
