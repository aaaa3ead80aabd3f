import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import {
  MESSAGES,
  ROLE_ADMIN,
  ROLE_USER,
  TOPICS,
  isAdminRole,
  usernameField,
  type AdminUserUpdate,
  type CheckRequest,
  type CheckResponse,
  type ProfileUpdate,
  type RegisterRequest,
  type UserDeletedData,
  type AccountNoticeData,
  type EmailVerificationRequestedData,
  type UserRegisteredData,
  type UserUpdatedData,
  type SessionsRevokedData,
} from '@portal/contracts';
import {
  HttpError,
  auditEvent,
  badRequest,
  conflict,
  createEvent,
  forbidden,
  notFound,
  unauthenticated,
  unsupportedMediaType,
  sweepBlobIntents,
  type BlobStore,
  type CallerIdentity,
  type Logger,
  type SealedBox,
} from '@portal/platform';
import type { EmailVerificationTokens } from './email-verification.js';
import { avatarUrl, pictureVersion, type UserChanges, type UserRecord } from './user-record.js';
import type { PasswordHasher } from './passwords.js';
import type { SessionService } from './session-service.js';
import { NotAnImageError, type PhotoProcessor, type ProcessedImage } from './photo-processor.js';
import {
  DuplicateUserError,
  type PendingEvent,
  type ResetCodeStore,
  type UserPage,
  type UserRepository,
} from '../repositories/user-repository.js';

export interface UserServiceDeps {
  users: UserRepository;
  /** Reset codes go with the account (SQLite cascades; Redis needs telling). */
  resetCodes: ResetCodeStore;
  sessions: SessionService;
  passwords: PasswordHasher;
  photos: PhotoProcessor;
  blobs: BlobStore;
  logger: Logger;
  verification: EmailVerificationTokens;
  sealer: SealedBox;
  /** The current participation terms' version (TERMS_VERSION). */
  termsVersion: string;
  /** Called after every commit that carries events, so the outbox relay publishes them at once. */
  onEventsCommitted: () => void;
  /**
   * Told after an account's address changed (AppointmentService.followAddress: its appointment
   * follows only if the account had confirmed the old address). A failure is logged: the change stands.
   */
  addressChanged?: (before: UserRecord, after: UserRecord) => Promise<void>;
}

/** An uploaded file as the HTTP layer hands it over: a temporary file the service removes. */
export interface UploadedFile {
  path: string;
}

export interface LoginResult {
  user: UserRecord;
  sessionRawId: string;
}

export interface NewAdmin {
  username: string;
  email: string;
  password: string;
  full_name?: string;
  phone_number?: string;
}

/** The identity use cases. Every rule about who may do what is checked here, on the server. */
export class UserService {
  constructor(private readonly deps: UserServiceDeps) {}

  async check(request: CheckRequest): Promise<CheckResponse> {
    if (request.username) {
      // The registration's own rule: a name it would refuse is not free either.
      const name = usernameField.safeParse(request.username);
      if (!name.success) return { exists: true, message: name.error.issues[0]?.message ?? MESSAGES.usernameFormat, field: 'username' };
    }
    if (request.username && (await this.deps.users.findByUsername(request.username))) {
      return { exists: true, message: MESSAGES.usernameTaken, field: 'username' };
    }
    if (request.email && (await this.deps.users.findByEmail(request.email))) {
      return { exists: true, message: MESSAGES.emailTaken, field: 'email' };
    }
    return { exists: false, message: '', field: null };
  }

  async register(request: RegisterRequest, photo: UploadedFile | undefined): Promise<UserRecord> {
    try {
      // Terms accepted in an earlier version than today's were not the terms in force: read them again.
      if (request.terms_version !== undefined && request.terms_version !== this.deps.termsVersion) {
        throw badRequest(MESSAGES.termsChanged, { terms_version: MESSAGES.termsChanged });
      }
      if (!photo) throw badRequest(MESSAGES.photoRequired, { verification_photo: MESSAGES.photoRequired });
      await this.assertAvailable(request.username, request.email);
      const [passwordHash, processed] = await Promise.all([
        this.deps.passwords.hash(request.password),
        this.readPhoto(() => this.deps.photos.verificationPhoto(photo.path), 'verification_photo', MESSAGES.photoNotImage),
      ]);
      const id = randomUUID();
      const photoKey = `users/${id}/verification-${shortVersion()}.${processed.extension}`;
      // Noted before the write: if the process dies before the account is saved, the photo is found.
      await this.deps.users.blobIntents.add(photoKey);
      await this.deps.blobs.put(photoKey, processed.bytes, { contentType: processed.contentType });
      const now = new Date().toISOString();
      const user: UserRecord = {
        id,
        username: request.username,
        full_name: request.full_name,
        email: request.email,
        phone_number: request.phone_number,
        pronouns: request.pronouns,
        role: ROLE_USER,
        password_hash: passwordHash,
        verification_photo_key: photoKey,
        avatar_key: null,
        video_watched: false,
        email_verified: false,
        sms_reminders: true,
        terms_version: request.terms_version ?? null,
        terms_accepted_at: request.terms_version !== undefined ? now : null,
        created_at: now,
        updated_at: now,
      };
      try {
        await this.deps.users.create(user, [this.registeredEvent(user), await this.verificationEvent(user, 'registered')]);
      } catch (error) {
        await this.deps.blobs.delete(photoKey);
        await this.deps.users.blobIntents.remove(photoKey);
        throw this.translateDuplicate(error);
      }
      // The account refers to its photo now: the note made before writing it is done with.
      await this.deps.users.blobIntents.remove(photoKey);
      this.deps.onEventsCommitted();
      this.deps.logger.info({ userId: id }, 'user registered');
      return user;
    } finally {
      if (photo) await rm(photo.path, { force: true });
    }
  }

  /** The account a login names: by its e-mail address when it has an @, else by its username. */
  private findByLogin(login: string): Promise<UserRecord | null> {
    return login.includes('@') ? this.deps.users.findByEmail(login.toLowerCase()) : this.deps.users.findByUsername(login);
  }

  /** The id of the account a login names, or null (the login limits count per account). */
  async accountOfLogin(login: string): Promise<string | null> {
    return (await this.findByLogin(login))?.id ?? null;
  }

  async login(login: string, password: string, previousSessionId?: string): Promise<LoginResult> {
    const user = await this.findByLogin(login);
    const valid = user ? await this.deps.passwords.verify(user.password_hash, password) : await this.deps.passwords.verifyNothing(password);
    if (!user || !valid) throw new HttpError(401, 'invalid_credentials', MESSAGES.loginMismatch);
    // A fresh session id at every login: a session id planted before login is worth nothing after.
    if (previousSessionId) await this.endSession(previousSessionId, user.id, 'logout');
    const { rawId } = await this.deps.sessions.start(user.id);
    if (isAdminRole(user.role)) {
      await this.deps.users.appendEvents([
        auditEvent({
          actor: { userId: user.id, username: user.username },
          action: 'admin.login',
          target: { type: 'user', id: user.id, label: user.username },
        }),
      ]);
      this.deps.onEventsCommitted();
    }
    return { user, sessionRawId: rawId };
  }

  async logout(caller: CallerIdentity): Promise<void> {
    await this.endSession(caller.sessionId, caller.userId, 'logout');
  }

  async me(caller: CallerIdentity): Promise<UserRecord> {
    const user = await this.deps.users.findById(caller.userId);
    if (!user) throw unauthenticated();
    return user;
  }

  async updateProfile(caller: CallerIdentity, update: ProfileUpdate, avatar: UploadedFile | undefined) {
    try {
      const current = await this.me(caller);
      const changes: UserChanges = {
        email: update.email,
        phone_number: update.phone_number,
        pronouns: update.pronouns,
        ...(update.full_name !== undefined ? { full_name: update.full_name } : {}),
        ...(update.sms_reminders !== undefined ? { sms_reminders: update.sms_reminders } : {}),
      };
      if (update.email !== current.email) {
        // A session alone (a phone left unlocked) must not be enough to move the account's mail,
        // and with it the password reset, to another address.
        await this.assertCurrentPassword(current, update.current_password);
        if (await this.deps.users.findByEmail(update.email)) throw conflict(MESSAGES.emailTaken, { email: MESSAGES.emailTaken });
        changes.email_verified = false;
      }
      let newAvatarKey: string | undefined;
      const intents = this.deps.users.blobIntents;
      if (avatar) {
        const processed = await this.readPhoto(() => this.deps.photos.avatar(avatar.path), 'file', MESSAGES.avatarNotImage);
        newAvatarKey = `users/${current.id}/avatar-${shortVersion()}.${processed.extension}`;
        // Both noted before anything changes: the new picture until the account refers to it, the
        // old one until it is deleted. A crash in between leaves whichever the account refers to.
        await intents.add(newAvatarKey);
        if (current.avatar_key) await intents.add(current.avatar_key);
        await this.deps.blobs.put(newAvatarKey, processed.bytes, { contentType: processed.contentType });
        changes.avatar_key = newAvatarKey;
      }
      const updated = await this.applyUpdate(current.id, changes).catch(async (error: unknown) => {
        if (newAvatarKey) {
          await this.deps.blobs.delete(newAvatarKey);
          await intents.remove(newAvatarKey);
          if (current.avatar_key) await intents.remove(current.avatar_key);
        }
        throw error;
      });
      if (newAvatarKey) {
        await intents.remove(newAvatarKey);
        if (current.avatar_key) {
          await this.deps.blobs.delete(current.avatar_key);
          await intents.remove(current.avatar_key);
        }
      }
      return updated;
    } finally {
      if (avatar) await rm(avatar.path, { force: true });
    }
  }

  async markVideoWatched(caller: CallerIdentity, userId: string): Promise<UserRecord> {
    if (caller.userId !== userId && !isAdminRole(caller.role)) throw forbidden(MESSAGES.notYours);
    const user = await this.deps.users.findById(userId);
    if (!user) throw notFound(MESSAGES.userNotFound);
    if (user.video_watched) return user;
    const updated = await this.deps.users.update(userId, { video_watched: true, updated_at: new Date().toISOString() }, [
      { topic: TOPICS.users, event: createEvent({ type: 'user.video-watched', key: userId, data: { userId } }) },
    ]);
    if (!updated) throw notFound(MESSAGES.userNotFound);
    this.deps.onEventsCommitted();
    return updated;
  }

  listUsers(limit: number, cursor?: string): Promise<UserPage> {
    return this.deps.users.list(limit, cursor);
  }

  async adminUpdate(caller: CallerIdentity, userId: string, update: AdminUserUpdate): Promise<UserRecord> {
    const current = await this.deps.users.findById(userId);
    if (!current) throw notFound(MESSAGES.userNotFound);
    const changes: UserChanges = {
      username: update.username,
      email: update.email,
      phone_number: update.phone_number,
      full_name: update.full_name,
    };
    if (update.email.toLowerCase() !== current.email.toLowerCase()) changes.email_verified = false;
    const { before, after } = changedFields(current, changes, ['username', 'email', 'phone_number', 'full_name']);
    return this.applyUpdate(userId, changes, [
      auditEvent({
        actor: caller,
        action: 'user.edit',
        target: { type: 'user', id: userId, label: update.username },
        subjectUserId: userId,
        before,
        after,
      }),
    ]);
  }

  /** Deletes the account and its pictures; answers what it was (to forget its rate-limit counters). */
  async deleteUser(caller: CallerIdentity, userId: string): Promise<UserRecord> {
    if (caller.userId === userId) throw badRequest(MESSAGES.cannotDeleteSelf);
    const user = await this.deps.users.findById(userId);
    if (!user) throw notFound(MESSAGES.userNotFound);
    if (isAdminRole(user.role) && (await this.deps.users.countAdmins()) <= 1) throw badRequest(MESSAGES.lastAdmin);
    const sessionIds = await this.deps.sessions.endAllFor(userId);
    const deleted: UserDeletedData = { userId };
    const revoked: SessionsRevokedData = { userId, sessionIds: null, reason: 'user-deleted' };
    // Noted before the account goes, so that its pictures go too even if the process dies right after.
    const pictures = picturesOf(userId);
    await this.deps.users.blobIntents.add(pictures);
    const existed = await this.deps.users
      .delete(userId, [
        { topic: TOPICS.users, event: createEvent({ type: 'user.deleted', key: userId, data: deleted }) },
        { topic: TOPICS.sessions, event: createEvent({ type: 'sessions.revoked', key: userId, data: revoked }) },
        // Stored without what identifies the account (it is gone by the time the log has it).
        auditEvent({
          actor: caller,
          action: 'user.delete',
          target: { type: 'user', id: userId, label: user.username },
          subjectUserId: userId,
          before: { role: user.role },
        }),
      ])
      .catch(async (error: unknown) => {
        await this.deps.users.blobIntents.remove(pictures);
        throw error;
      });
    if (!existed) {
      await this.deps.users.blobIntents.remove(pictures);
      throw notFound(MESSAGES.userNotFound);
    }
    this.deps.onEventsCommitted();
    await this.deps.resetCodes.delete(userId);
    await this.deps.blobs.deletePrefix(pictures);
    await this.deps.users.blobIntents.remove(pictures);
    this.deps.logger.info({ userId, sessionsEnded: sessionIds.length }, 'user deleted');
    return user;
  }

  /**
   * Who may see a user's pictures: its owner and administrators. The avatar too: public answers
   * carry none, since an owner can change it after publication with no moderator seeing it.
   */
  async pictureFor(caller: CallerIdentity | undefined, userId: string, kind: 'verification-photo' | 'avatar') {
    if (!caller) throw unauthenticated();
    if (caller.userId !== userId && !isAdminRole(caller.role)) throw forbidden(MESSAGES.notYours);
    const user = await this.deps.users.findById(userId);
    const key = kind === 'avatar' ? user?.avatar_key : user?.verification_photo_key;
    if (!key) throw notFound('No picture');
    return { key, version: pictureVersion(key) };
  }

  /**
   * Pictures are written before the account that refers to them is saved, and deleted after the
   * account stops referring to them (a new avatar) or goes (a deletion); each picture, or all of an
   * account's (users/<id>/), is noted first and the note removed when done. A note left by a
   * process that died is settled here: a picture the account refers to stays, any other noted one
   * goes, and so do all the pictures of an account that no longer exists. Notes made before
   * `before` are settled: at the start of the only process using the store that is all of them;
   * otherwise only notes old enough that no request can still be working on them.
   */
  async sweepPictureIntents(before: Date): Promise<number> {
    const swept = await sweepBlobIntents(this.deps.users.blobIntents, before, async (noted) => {
      const match = NOTED_PICTURE.exec(noted);
      if (!match) return 0;
      const user = await this.deps.users.findById(match[1]!);
      if (match[2] === '') return user ? 0 : this.deps.blobs.deletePrefix(noted);
      if (user && (user.verification_photo_key === noted || user.avatar_key === noted)) return 0;
      const existed = (await this.deps.blobs.stat(noted)) !== null;
      await this.deps.blobs.delete(noted);
      return existed ? 1 : 0;
    });
    if (swept.notes > 0)
      this.deps.logger.info({ notes: swept.notes, pictures: swept.blobs }, 'settled pictures left by an interrupted write or deletion');
    return swept.blobs;
  }

  /** Creates the administrator named in the settings unless an account has that username or e-mail. */
  async ensureAdmin(admin: NewAdmin): Promise<'created' | 'exists'> {
    const existing = (await this.deps.users.findByUsername(admin.username)) ?? (await this.deps.users.findByEmail(admin.email));
    if (existing) return 'exists';
    const now = new Date().toISOString();
    const user: UserRecord = {
      id: randomUUID(),
      username: admin.username,
      full_name: admin.full_name ?? 'Administrator',
      email: admin.email.toLowerCase(),
      phone_number: admin.phone_number ?? '0000000000',
      pronouns: '',
      role: ROLE_ADMIN,
      password_hash: await this.deps.passwords.hash(admin.password),
      verification_photo_key: null,
      avatar_key: null,
      // Staff created by ops are not sent through the participants' onboarding video.
      video_watched: true,
      email_verified: true,
      sms_reminders: true,
      terms_version: null,
      terms_accepted_at: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.deps.users.create(user, [this.registeredEvent(user)]);
    } catch (error) {
      throw this.translateDuplicate(error);
    }
    this.deps.onEventsCommitted();
    return 'created';
  }

  /** The verification link was followed: the address is confirmed if it is still the account's. */
  async verifyEmail(token: string): Promise<boolean> {
    const claim = await this.deps.verification.verify(token);
    if (!claim) return false;
    const user = await this.deps.users.findById(claim.userId);
    if (!user || user.email.toLowerCase() !== claim.email.toLowerCase()) return false;
    if (!user.email_verified) await this.applyUpdate(user.id, { email_verified: true });
    return true;
  }

  /**
   * A new confirmation link for the signed-in account's address (the earlier one died: it is
   * valid 7 days, and one signed with a retired secret no longer opens). Answers whether one was
   * sent: an address already confirmed needs none. The limits are the route's (rate-limits.ts).
   */
  async resendVerification(caller: CallerIdentity): Promise<{ sent: boolean; email: string }> {
    const user = await this.me(caller);
    if (user.email_verified) return { sent: false, email: user.email };
    await this.deps.users.appendEvents([await this.verificationEvent(user, 'resent')]);
    this.deps.onEventsCommitted();
    this.deps.logger.info({ userId: user.id }, 'a new confirmation link was asked for');
    return { sent: true, email: user.email };
  }

  /** Makes an existing account an administrator (the ops command). */
  async promoteToAdmin(login: string): Promise<'promoted' | 'unchanged'> {
    const user = login.includes('@') ? await this.deps.users.findByEmail(login.toLowerCase()) : await this.deps.users.findByUsername(login);
    if (!user) throw notFound(MESSAGES.userNotFound);
    if (isAdminRole(user.role)) return 'unchanged';
    await this.applyUpdate(user.id, { role: ROLE_ADMIN }, [
      auditEvent({
        actor: 'ops-command',
        action: 'user.promote',
        target: { type: 'user', id: user.id, label: user.username },
        subjectUserId: user.id,
        before: { role: user.role },
        after: { role: ROLE_ADMIN },
      }),
    ]);
    return 'promoted';
  }

  /** Records an administrator's export of a participant's data (the export itself reads only). */
  async recordExport(caller: CallerIdentity, user: Pick<UserRecord, 'id' | 'username'>): Promise<void> {
    await this.deps.users.appendEvents([
      auditEvent({
        actor: caller,
        action: 'user.export',
        target: { type: 'user', id: user.id, label: user.username },
        subjectUserId: user.id,
      }),
    ]);
    this.deps.onEventsCommitted();
  }

  private async applyUpdate(userId: string, changes: UserChanges, alsoRecord: PendingEvent[] = []): Promise<UserRecord> {
    const current = await this.deps.users.findById(userId);
    if (!current) throw notFound(MESSAGES.userNotFound);
    const next = { ...current, ...changes };
    const emailChanged = next.email.toLowerCase() !== current.email.toLowerCase();
    const data: UserUpdatedData = {
      userId,
      username: next.username,
      email: next.email,
      full_name: next.full_name,
      role: next.role,
      avatar_AWS_URL: avatarUrl(next),
    };
    let updated: UserRecord | null;
    try {
      updated = await this.deps.users.update(userId, { ...changes, updated_at: new Date().toISOString() }, [
        { topic: TOPICS.users, event: createEvent({ type: 'user.updated', key: userId, data }) },
        ...(emailChanged ? [await this.verificationEvent(next, 'email-changed'), this.emailChangedNotice(current, next.email)] : []),
        ...alsoRecord,
      ]);
    } catch (error) {
      throw this.translateDuplicate(error);
    }
    if (!updated) throw notFound(MESSAGES.userNotFound);
    this.deps.onEventsCommitted();
    if (emailChanged && this.deps.addressChanged) {
      await this.deps.addressChanged(current, updated).catch((error: unknown) => {
        this.deps.logger.error(
          { userId, err: error },
          'the appointment of a changed address was not moved: it stays under the old address',
        );
      });
    }
    return updated;
  }

  private async assertCurrentPassword(user: UserRecord, password: string | undefined): Promise<void> {
    if (!password) throw badRequest(MESSAGES.currentPasswordRequired, { current_password: MESSAGES.currentPasswordRequired });
    if (!(await this.deps.passwords.verify(user.password_hash, password))) {
      this.deps.logger.info({ userId: user.id }, 'e-mail change refused: wrong current password');
      throw badRequest(MESSAGES.currentPasswordWrong, { current_password: MESSAGES.currentPasswordWrong });
    }
  }

  private async endSession(sessionId: string, userId: string, reason: SessionsRevokedData['reason']): Promise<void> {
    const ended = await this.deps.sessions.end(sessionId);
    if (!ended) return;
    const data: SessionsRevokedData = { userId, sessionIds: [sessionId], reason };
    const events: PendingEvent[] = [{ topic: TOPICS.sessions, event: createEvent({ type: 'sessions.revoked', key: userId, data }) }];
    await this.deps.users.appendEvents(events);
    this.deps.onEventsCommitted();
  }

  private async assertAvailable(username: string, email: string): Promise<void> {
    const taken = await this.check({ username, email });
    if (taken.exists && taken.field) throw conflict(taken.message, { [taken.field]: taken.message });
  }

  private async readPhoto(read: () => Promise<ProcessedImage>, field: string, message: string): Promise<ProcessedImage> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof NotAnImageError) throw unsupportedMediaType(message, { [field]: message });
      throw error;
    }
  }

  private translateDuplicate(error: unknown): unknown {
    if (error instanceof DuplicateUserError) {
      const message = error.field === 'email' ? MESSAGES.emailTaken : MESSAGES.usernameTaken;
      return conflict(message, { [error.field]: message });
    }
    return error;
  }

  private async verificationEvent(user: UserRecord, reason: EmailVerificationRequestedData['reason']): Promise<PendingEvent> {
    const data: EmailVerificationRequestedData = {
      userId: user.id,
      email: user.email,
      username: user.username,
      full_name: user.full_name,
      sealedToken: this.deps.sealer.seal(await this.deps.verification.mint(user.id, user.email)),
      reason,
    };
    return { topic: TOPICS.users, event: createEvent({ type: 'email-verification.requested', key: user.id, data }) };
  }

  /** The old address is told where the account's mail goes now (if it was not its owner, they can act). */
  private emailChangedNotice(before: UserRecord, newEmail: string): PendingEvent {
    const data: AccountNoticeData = {
      notice: 'email-changed',
      userId: before.id,
      email: before.email,
      full_name: before.full_name,
      newEmail,
    };
    return { topic: TOPICS.users, event: createEvent({ type: 'account.notice', key: before.id, data }) };
  }

  private registeredEvent(user: UserRecord): PendingEvent {
    const data: UserRegisteredData = {
      userId: user.id,
      username: user.username,
      email: user.email,
      full_name: user.full_name,
      role: user.role,
    };
    return { topic: TOPICS.users, event: createEvent({ type: 'user.registered', key: user.id, data }) };
  }
}

/** The listed fields the changes alter: their values before and after (for the audit log). */
function changedFields(current: UserRecord, changes: UserChanges, fields: (keyof UserChanges & keyof UserRecord)[]) {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const field of fields) {
    if (changes[field] === undefined || changes[field] === current[field]) continue;
    before[field] = current[field];
    after[field] = changes[field];
  }
  return { before, after };
}

/** Where an account's pictures are (all of them go with the account). */
const picturesOf = (userId: string) => `users/${userId}/`;
/** A noted picture (users/<id>/<name>) or all of an account's (users/<id>/). */
const NOTED_PICTURE = /^users\/([^/]+)\/([^/]*)$/;

/** A short, unique, URL-safe version tag for a picture's key. */
function shortVersion(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}
