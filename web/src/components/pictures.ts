import type { User } from '@portal/contracts';

export const DEFAULT_AVATAR_URL = '/default-avatar.svg';
export const LOGO_URL = '/logo.svg';

/** The navigation bar shows the verification photo (SPEC section 2), or the default picture. */
export function navigationPictureOf(user: User | null): string {
  return user?.verification_photo_AWS_URL ?? DEFAULT_AVATAR_URL;
}

/** The profile shows the avatar, else the verification photo, else the default picture. */
export function profilePictureOf(user: User): string {
  return user.avatar_AWS_URL ?? user.verification_photo_AWS_URL ?? DEFAULT_AVATAR_URL;
}
