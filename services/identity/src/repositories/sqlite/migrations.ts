import { BLOB_INTENTS_TABLE_SQL, OUTBOX_TABLE_SQL } from '@portal/platform';

export const IDENTITY_MIGRATIONS = [
  `CREATE TABLE users (
     id TEXT PRIMARY KEY,
     username TEXT NOT NULL UNIQUE COLLATE NOCASE,
     full_name TEXT NOT NULL,
     email TEXT NOT NULL UNIQUE COLLATE NOCASE,
     phone_number TEXT NOT NULL,
     pronouns TEXT NOT NULL DEFAULT '',
     role INTEGER NOT NULL DEFAULT 1,
     password_hash TEXT NOT NULL,
     verification_photo_key TEXT,
     avatar_key TEXT,
     video_watched INTEGER NOT NULL DEFAULT 0,
     email_verified INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX users_by_created ON users (created_at, id);
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_by_user ON sessions (user_id);
   CREATE INDEX sessions_by_expiry ON sessions (expires_at);
   ${OUTBOX_TABLE_SQL}`,
  `CREATE TABLE reset_codes (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
     code_hash TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     attempts_left INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // Pictures being written or deleted (UserService.sweepPictureIntents).
  BLOB_INTENTS_TABLE_SQL,
  // The audit log (SqliteAuditLog): append-only; the only change allowed is an erasure.
  `CREATE TABLE audit_entries (
     id TEXT PRIMARY KEY,
     at TEXT NOT NULL,
     actor_id TEXT,
     actor_username TEXT,
     action TEXT NOT NULL,
     target_type TEXT NOT NULL,
     target_id TEXT,
     target_label TEXT,
     subject_user_id TEXT,
     before_json TEXT,
     after_json TEXT,
     details_json TEXT,
     erased INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX audit_by_time ON audit_entries (at, id);
   CREATE INDEX audit_by_actor ON audit_entries (actor_id);
   CREATE INDEX audit_by_target ON audit_entries (target_id);
   CREATE INDEX audit_by_subject ON audit_entries (subject_user_id);
   CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
     BEGIN SELECT RAISE(ABORT, 'audit entries are append-only'); END;
   CREATE TRIGGER audit_entries_erase_only BEFORE UPDATE ON audit_entries WHEN NEW.erased <> 1
     BEGIN SELECT RAISE(ABORT, 'audit entries are append-only'); END;`,
  // The participation terms accepted at registration (null: not recorded).
  `ALTER TABLE users ADD COLUMN terms_version TEXT;
   ALTER TABLE users ADD COLUMN terms_accepted_at TEXT;`,
  // Runs of periodic work (SqliteScheduleStore): the moderator digest.
  `CREATE TABLE schedule_runs (name TEXT PRIMARY KEY, last_at TEXT NOT NULL);`,
  // Usernames unique by their skeleton (domain/username-key.ts); filled for older rows by
  // SqliteUserRepository when it opens.
  `ALTER TABLE users ADD COLUMN username_key TEXT;
   ALTER TABLE users ADD COLUMN username_look TEXT;
   CREATE UNIQUE INDEX users_by_username_key ON users (username_key);
   CREATE UNIQUE INDEX users_by_username_look ON users (username_look);`,
  // Appointment reminders by text message (on unless the participant turns them off).
  `ALTER TABLE users ADD COLUMN sms_reminders INTEGER NOT NULL DEFAULT 1;`,
  // Appointments (SqliteAppointmentStore): one per ticket holder's e-mail address.
  `CREATE TABLE appointments (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE COLLATE NOCASE,
     user_id TEXT,
     start TEXT NOT NULL,
     time_zone TEXT NOT NULL,
     place TEXT NOT NULL,
     note TEXT NOT NULL,
     phone_input TEXT NOT NULL,
     version INTEGER NOT NULL,
     status TEXT NOT NULL,
     status_updated_at TEXT,
     deliveries_json TEXT NOT NULL DEFAULT '[]',
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX appointments_by_start ON appointments (start);
   CREATE INDEX appointments_by_user ON appointments (user_id);`,
  // The username keys fold NFKC and full case first (domain/username-key.ts): every row is keyed
  // again when the store opens (two older names that now clash both stay, as before).
  `UPDATE users SET username_key = NULL, username_look = NULL;`,
  // An appointment is an account's while the account has confirmed its address (derived at every
  // read); the links stored before, some made to accounts that never confirmed it, are dropped.
  `UPDATE appointments SET user_id = NULL;`,
  // The ticket holder's name as the box office gave it (the CSV's name column; '' when none).
  `ALTER TABLE appointments ADD COLUMN name TEXT NOT NULL DEFAULT '';`,
];
