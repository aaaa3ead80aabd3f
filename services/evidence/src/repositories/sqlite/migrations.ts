import { OUTBOX_TABLE_SQL } from '@portal/platform';

export const EVIDENCE_MIGRATIONS = [
  `CREATE TABLE evidence (
     id TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     username TEXT NOT NULL,
     avatar_url TEXT,
     title TEXT NOT NULL,
     notes TEXT NOT NULL,
     location TEXT,
     media_type INTEGER NOT NULL,
     is_public INTEGER NOT NULL DEFAULT 0,
     date_posted TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     media_status TEXT NOT NULL,
     media_error TEXT,
     media_revision INTEGER NOT NULL DEFAULT 0,
     original_key TEXT,
     original_type TEXT,
     original_size INTEGER,
     display_key TEXT,
     display_type TEXT,
     thumb_key TEXT,
     poster_key TEXT,
     placeholder TEXT,
     width INTEGER,
     height INTEGER,
     duration REAL
   );
   CREATE INDEX evidence_by_date ON evidence (date_posted DESC, id DESC);
   CREATE INDEX evidence_by_owner ON evidence (user_id, date_posted DESC, id DESC);
   CREATE INDEX evidence_public ON evidence (is_public, date_posted DESC, id DESC);
   CREATE INDEX evidence_processing ON evidence (media_status, updated_at) WHERE media_status = 'processing';
   CREATE TABLE finished_uploads (
     upload_id TEXT PRIMARY KEY,
     evidence_id TEXT NOT NULL REFERENCES evidence (id) ON DELETE CASCADE,
     size INTEGER NOT NULL
   );
   CREATE TABLE authors (
     user_id TEXT PRIMARY KEY,
     username TEXT NOT NULL,
     avatar_url TEXT
   );
   ${OUTBOX_TABLE_SQL}`,
  // Prefixes of blobs being written or deleted (EvidenceService.sweepBlobIntents).
  `CREATE TABLE blob_intents (
     prefix TEXT PRIMARY KEY,
     created_at TEXT NOT NULL
   );
   CREATE INDEX blob_intents_by_age ON blob_intents (created_at);`,
  // The client's idempotency key of each item made with one (EvidenceRepository.create).
  `CREATE TABLE idempotency_keys (
     user_id TEXT NOT NULL,
     key TEXT NOT NULL,
     evidence_id TEXT NOT NULL REFERENCES evidence (id) ON DELETE CASCADE,
     PRIMARY KEY (user_id, key)
   );
   CREATE INDEX idempotency_keys_by_item ON idempotency_keys (evidence_id);`,
];
