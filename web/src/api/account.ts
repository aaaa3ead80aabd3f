import type { CheckResponse, RegisterRequest, ResendLinkResponse, User } from '@portal/contracts';
import { ROLE_USER } from '@portal/contracts';
import { apiRequest } from './http';

export function checkAvailability(username: string, email: string): Promise<CheckResponse> {
  return apiRequest<CheckResponse>('/api/user/check', { method: 'POST', json: { username, email } });
}

/** POST /api/user/register: the multipart registration with the verification photo. */
export function register(fields: RegisterRequest, photo: Blob): Promise<User> {
  const form = new FormData();
  form.append('username', fields.username);
  form.append('password', fields.password);
  form.append('email', fields.email);
  form.append('usernameOrEmail', fields.email);
  form.append('phone_number', fields.phone_number);
  form.append('full_name', fields.full_name);
  form.append('pronouns', fields.pronouns);
  form.append('role', String(ROLE_USER));
  if (fields.terms_version) form.append('terms_version', fields.terms_version);
  form.append('verification_photo', photo, fileNameFor(photo));
  return apiRequest<User>('/api/user/register', { method: 'POST', form });
}

export interface ProfileChanges {
  email: string;
  phone_number: string;
  pronouns: string;
  full_name: string;
  /** Needed, and sent, only when the e-mail address changes. */
  current_password?: string | undefined;
  /** Text reminders of the appointment on or off; left out: unchanged. */
  sms_reminders?: boolean | undefined;
  avatar?: File | null;
}

/** PUT /api/evidence/user: the signed-in user's own profile, with an optional new avatar. */
export function updateProfile(changes: ProfileChanges): Promise<User> {
  const form = new FormData();
  form.append('email', changes.email);
  form.append('phone_number', changes.phone_number);
  form.append('pronouns', changes.pronouns);
  form.append('full_name', changes.full_name);
  if (changes.current_password) form.append('current_password', changes.current_password);
  if (changes.sms_reminders !== undefined) form.append('sms_reminders', String(changes.sms_reminders));
  if (changes.avatar) form.append('file', changes.avatar, changes.avatar.name);
  return apiRequest<User>('/api/evidence/user', { method: 'PUT', form });
}

/** PUT /api/user/watched/{id}: the onboarding video has been watched. */
export function markVideoWatched(userId: string): Promise<User> {
  return apiRequest<User>(`/api/user/watched/${encodeURIComponent(userId)}`, { method: 'PUT' });
}

function fileNameFor(photo: Blob): string {
  if (photo instanceof File && photo.name) return photo.name;
  const extension = photo.type.split('/')[1]?.replace('jpeg', 'jpg') ?? 'jpg';
  return `selfie.${extension}`;
}

/** POST /api/user/verify-email/resend: a new confirmation link for the signed-in account's address. */
export function resendConfirmationLink(): Promise<ResendLinkResponse> {
  return apiRequest<ResendLinkResponse>('/api/user/verify-email/resend', { method: 'POST' });
}
