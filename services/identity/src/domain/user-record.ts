import type { User } from '@portal/contracts';

/** A user as the identity service stores it. */
export interface UserRecord {
  id: string;
  username: string;
  full_name: string;
  email: string;
  phone_number: string;
  pronouns: string;
  role: number;
  password_hash: string;
  /** Blob key of the verification photo, or null. */
  verification_photo_key: string | null;
  /** Blob key of the avatar, or null. */
  avatar_key: string | null;
  video_watched: boolean;
  email_verified: boolean;
  /** The participation terms accepted at registration, and when; null for accounts made without. */
  terms_version: string | null;
  terms_accepted_at: string | null;
  /** Appointment reminders by text message too (the participant may turn them off). */
  sms_reminders: boolean;
  created_at: string;
  updated_at: string;
}

export type UserChanges = Partial<Omit<UserRecord, 'id' | 'created_at'>>;

/** Public URLs of a user's pictures; the version in the key makes every new picture a new URL. */
export function verificationPhotoUrl(user: Pick<UserRecord, 'id' | 'verification_photo_key'>): string | null {
  return user.verification_photo_key ? `/api/user/${user.id}/verification-photo?v=${pictureVersion(user.verification_photo_key)}` : null;
}

export function avatarUrl(user: Pick<UserRecord, 'id' | 'avatar_key'>): string | null {
  return user.avatar_key ? `/api/user/${user.id}/avatar?v=${pictureVersion(user.avatar_key)}` : null;
}

/** Picture keys look like users/<id>/<kind>-<version>.<ext>; this answers the version. */
export function pictureVersion(key: string): string {
  return key.slice(key.lastIndexOf('-') + 1, key.lastIndexOf('.'));
}

/** The user object of the API: never the password hash, never blob keys. */
export function toUserResponse(user: UserRecord): User {
  return {
    id: user.id,
    username: user.username,
    full_name: user.full_name,
    email: user.email,
    phone_number: user.phone_number,
    pronouns: user.pronouns,
    role: user.role,
    verification_photo: user.verification_photo_key !== null,
    verification_photo_AWS_URL: verificationPhotoUrl(user),
    avatar_AWS_URL: avatarUrl(user),
    video_watched: user.video_watched,
    email_verified: user.email_verified,
    created_at: user.created_at,
    terms_version: user.terms_version,
    terms_accepted_at: user.terms_accepted_at,
    sms_reminders: user.sms_reminders,
  };
}
