import type { EventEnvelope } from '@portal/contracts';
import type { BlobIntents, OutboxStore } from '@portal/platform';
import type { UserChanges, UserRecord } from '../domain/user-record.js';

/** An event to publish once the change it belongs to is committed. */
export interface PendingEvent {
  topic: string;
  event: EventEnvelope;
}

/** Raised when a username or e-mail address is already used by another account. */
export class DuplicateUserError extends Error {
  override name = 'DuplicateUserError';
  constructor(readonly field: 'username' | 'email') {
    super(`${field} already in use`);
  }
}

export interface UserPage {
  items: UserRecord[];
  nextCursor: string | null;
}

/**
 * The user repository port. Each write takes the events that announce it and stores them with
 * the change, atomically (the transactional outbox), so that no committed change goes unannounced.
 * Usernames and e-mail addresses are unique without regard to case.
 */
export interface UserRepository {
  findById(id: string): Promise<UserRecord | null>;
  findByUsername(username: string): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  /**
   * The accounts under any of these addresses (any case, as findByEmail), in no particular order:
   * none for an address without one. For a day's call sheet, one query for thousands of rows.
   */
  findByEmails(emails: readonly string[]): Promise<UserRecord[]>;
  create(user: UserRecord, events: PendingEvent[]): Promise<void>;
  /** Applies the changes; null when the user does not exist. */
  update(id: string, changes: UserChanges, events: PendingEvent[]): Promise<UserRecord | null>;
  /** False when the user did not exist. */
  delete(id: string, events: PendingEvent[]): Promise<boolean>;
  /** Stores events that belong to no user change (for example a logout). */
  appendEvents(events: PendingEvent[]): Promise<void>;
  /** Oldest accounts first. */
  list(limit: number, cursor?: string): Promise<UserPage>;
  countAdmins(): Promise<number>;
  /**
   * Notes of pictures being written or deleted (users/<id>/<key>, or users/<id>/ for all of an
   * account's): what a crash leaves noted is garbage unless the user row refers to it
   * (UserService.sweepPictureIntents).
   */
  readonly blobIntents: BlobIntents;
  readonly outbox: OutboxStore;
  ping(): Promise<void>;
}

export interface SessionRecord {
  /** SHA-256 of the session id; the id itself is only ever in the browser's cookie. */
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
}

/** The session store port (SQLite in all-in-one, Redis in the distributed mode). */
export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  /** Null when missing or expired. */
  find(id: string): Promise<SessionRecord | null>;
  extend(id: string, expiresAt: number): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** Deletes every session of the user; answers their ids. */
  deleteForUser(userId: string): Promise<string[]>;
  ping(): Promise<void>;
}

export interface ResetCodeRecord {
  userId: string;
  /** HMAC-SHA256 of the code under a server secret: a copy of the table reveals no code. */
  codeHash: string;
  expiresAt: number;
  attemptsLeft: number;
}

/** Password-reset codes, one live code per user (a new one replaces the old). */
export interface ResetCodeStore {
  put(record: ResetCodeRecord): Promise<void>;
  get(userId: string): Promise<ResetCodeRecord | null>;
  /**
   * Takes one attempt from the user's code, in one atomic step, if the code is live at `now` and
   * has attempts left; answers the code as it is after the step (attemptsLeft already lowered),
   * or null when there is no attempt to take. A guess is compared only after its attempt is taken,
   * so concurrent guesses (on any number of replicas) are compared at most attemptsLeft times.
   */
  takeAttempt(userId: string, now: number): Promise<ResetCodeRecord | null>;
  /** Gives back the attempt a right code took (the code stays good for setting the password). */
  returnAttempt(userId: string): Promise<void>;
  delete(userId: string): Promise<void>;
}
