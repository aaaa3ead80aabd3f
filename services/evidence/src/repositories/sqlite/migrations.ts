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
  // Moderation: the review queue (review_status) and search in titles and notes (FTS5). Items
  // already public were published by an administrator, so they count as reviewed; the others
  // wait in the queue. The search index is contentless (the text stays in evidence only) and
  // kept by triggers; its documents are numbered in a table of their own rather than by the
  // evidence table's implicit rowid, which a VACUUM may renumber. FTS5's secure-delete removes a
  // deleted item's words from the index at once (not only when its segments are next merged).
  `ALTER TABLE evidence ADD COLUMN review_status TEXT NOT NULL DEFAULT 'new';
   UPDATE evidence SET review_status = 'reviewed' WHERE is_public = 1;
   CREATE INDEX evidence_review ON evidence (review_status, date_posted DESC, id DESC);
   CREATE TABLE evidence_search_docs (
     doc INTEGER PRIMARY KEY,
     evidence_id TEXT NOT NULL UNIQUE
   );
   CREATE VIRTUAL TABLE evidence_search USING fts5(
     title, notes, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
   );
   INSERT INTO evidence_search (evidence_search, rank) VALUES ('secure-delete', 1);
   INSERT INTO evidence_search_docs (evidence_id) SELECT id FROM evidence;
   INSERT INTO evidence_search (rowid, title, notes)
     SELECT d.doc, e.title, e.notes FROM evidence e JOIN evidence_search_docs d ON d.evidence_id = e.id;
   CREATE TRIGGER evidence_search_insert AFTER INSERT ON evidence BEGIN
     INSERT INTO evidence_search_docs (evidence_id) VALUES (new.id);
     INSERT INTO evidence_search (rowid, title, notes)
       SELECT doc, new.title, new.notes FROM evidence_search_docs WHERE evidence_id = new.id;
   END;
   CREATE TRIGGER evidence_search_update AFTER UPDATE OF title, notes ON evidence BEGIN
     DELETE FROM evidence_search WHERE rowid = (SELECT doc FROM evidence_search_docs WHERE evidence_id = old.id);
     INSERT INTO evidence_search (rowid, title, notes)
       SELECT doc, new.title, new.notes FROM evidence_search_docs WHERE evidence_id = new.id;
   END;
   CREATE TRIGGER evidence_search_delete AFTER DELETE ON evidence BEGIN
     DELETE FROM evidence_search WHERE rowid = (SELECT doc FROM evidence_search_docs WHERE evidence_id = old.id);
     DELETE FROM evidence_search_docs WHERE evidence_id = old.id;
   END;`,
  // The client's idempotency key of each item made with one (EvidenceRepository.create).
  `CREATE TABLE idempotency_keys (
     user_id TEXT NOT NULL,
     key TEXT NOT NULL,
     evidence_id TEXT NOT NULL REFERENCES evidence (id) ON DELETE CASCADE,
     PRIMARY KEY (user_id, key)
   );
   CREATE INDEX idempotency_keys_by_item ON idempotency_keys (evidence_id);`,
  // Faces (docs/decisions/0044): the check of each photo and video, the regions' blob and version,
  // the consent on record, and the blurred public copies. Items from before were never checked
  // and keep being shown as they are (face_check NULL, public_blur 'none'); those still waiting for
  // their media are checked by the worker that processes them.
  `ALTER TABLE evidence ADD COLUMN face_check TEXT;
   ALTER TABLE evidence ADD COLUMN face_count INTEGER;
   ALTER TABLE evidence ADD COLUMN faces_key TEXT;
   ALTER TABLE evidence ADD COLUMN faces_version INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE evidence ADD COLUMN faces_consent INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE evidence ADD COLUMN public_blur TEXT NOT NULL DEFAULT 'none';
   ALTER TABLE evidence ADD COLUMN public_display_key TEXT;
   ALTER TABLE evidence ADD COLUMN public_thumb_key TEXT;
   ALTER TABLE evidence ADD COLUMN public_poster_key TEXT;
   ALTER TABLE evidence ADD COLUMN public_placeholder TEXT;
   UPDATE evidence SET face_check = 'pending', public_blur = 'pending' WHERE media_status = 'processing' AND media_type IN (2, 3);
   CREATE INDEX evidence_blur_pending ON evidence (updated_at) WHERE public_blur = 'pending' AND face_check IN ('done', 'off');`,
  // Photos and videos processed before faces were checked, found for their check (the evidence
  // service's reconciliation with FACE_BLUR=auto) without a scan of the archive each minute.
  `CREATE INDEX evidence_faces_unchecked ON evidence (media_type, date_posted, id) WHERE face_check IS NULL;`,
];
