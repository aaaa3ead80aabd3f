import type { Writable } from 'node:stream';
import { MESSAGES, isAdminRole } from '@portal/contracts';
import { notFound, streamZip, type AddToZip, type BlobStore, type Logger } from '@portal/platform';
import type { EvidenceSource } from '../clients/evidence-client.js';
import type { ResetCodeStore, UserRepository } from '../repositories/user-repository.js';
import type { UserRecord } from './user-record.js';
import type { AppointmentService } from './appointment-service.js';

export interface ParticipantExportDeps {
  users: UserRepository;
  resetCodes: ResetCodeStore;
  blobs: BlobStore;
  evidence: EvidenceSource;
  /** The participant's appointment and the records of its messages (appointment.json). */
  appointments: Pick<AppointmentService, 'forExport'>;
  logger: Logger;
  clock?: () => number;
}

/** An export ready to be written: everything is looked up, only the bytes remain to stream. */
export interface PreparedExport {
  fileName: string;
  /** Whose data it is. */
  user: Pick<UserRecord, 'id' | 'username'>;
  /** Streams the archive into the destination; rejects (after destroying it) when a part fails. */
  writeTo(destination: Writable): Promise<void>;
}

/**
 * Everything the portal holds on one participant, as one zip archive: profile.json (every field
 * of the account except the password hash), the verification photo and avatar, evidence.json
 * (every stored field of every item) and each item's files (the original and every derivative)
 * under evidence/<id>/, and appointment.json (the appointment, its phone number and what became of
 * each of its messages). Files stream one after the other from the blob store and the evidence
 * service into the archive; none is held whole in memory.
 */
export class ParticipantExporter {
  constructor(private readonly deps: ParticipantExportDeps) {}

  async prepare(userId: string): Promise<PreparedExport> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw notFound(MESSAGES.userNotFound);
    // Asked before the first byte is sent, so that an evidence outage is a clean 503, not a broken file.
    const items = await this.deps.evidence.itemsOf(userId);
    const resetCode = await this.deps.resetCodes.get(userId);
    const appointment = await this.deps.appointments.forExport(user);
    const now = new Date((this.deps.clock ?? Date.now)());
    const pictures = [
      { key: user.verification_photo_key, name: pictureName('verification-photo', user.verification_photo_key) },
      { key: user.avatar_key, name: pictureName('avatar', user.avatar_key) },
    ];
    const profile = {
      exported_at: now.toISOString(),
      user: profileOf(user),
      files: { verification_photo: pictures[0]!.name, avatar: pictures[1]!.name },
      password: 'Set. The portal keeps only an argon2id hash of it, which is not exported.',
      password_reset: resetCode ? { pending: true, expires_at: new Date(resetCode.expiresAt).toISOString() } : { pending: false },
    };
    const evidence = items.map(({ record, files }) => ({
      ...record,
      files: files.map((file) => ({ ...file, path: `evidence/${record.id}/${file.name}` })),
    }));
    const date = now.toISOString().slice(0, 10);
    return {
      user: { id: user.id, username: user.username },
      fileName: `participant-${user.username.replace(/[^A-Za-z0-9_-]/g, '_')}-${date}.zip`,
      writeTo: (destination) =>
        this.write(destination, async (add) => {
          await add(JSON.stringify(profile, null, 2), 'profile.json', false);
          for (const picture of pictures) {
            if (!picture.key || !picture.name) continue;
            const object = await this.deps.blobs.get(picture.key);
            if (object) await add(object.body, picture.name, true);
          }
          await add(
            JSON.stringify({ exported_at: profile.exported_at, user_id: user.id, items: evidence }, null, 2),
            'evidence.json',
            false,
          );
          await add(
            JSON.stringify({ exported_at: profile.exported_at, user_id: user.id, appointment }, null, 2),
            'appointment.json',
            false,
          );
          for (const item of evidence) {
            for (const file of item.files) await add(await this.deps.evidence.openFile(item.id, file.variant), file.path, true);
          }
        }),
    };
  }

  private async write(destination: Writable, fill: (add: AddToZip) => Promise<void>): Promise<void> {
    try {
      await streamZip(destination, fill);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'participant export stopped');
      throw error;
    }
  }
}

/** Every field the account holds, except the password hash and the internal storage keys. */
function profileOf(user: UserRecord) {
  return {
    id: user.id,
    username: user.username,
    full_name: user.full_name,
    email: user.email,
    email_verified: user.email_verified,
    phone_number: user.phone_number,
    pronouns: user.pronouns,
    role: user.role,
    role_name: isAdminRole(user.role) ? 'administrator' : 'participant',
    video_watched: user.video_watched,
    sms_reminders: user.sms_reminders,
    participation_terms:
      user.terms_version !== null ? { version: user.terms_version, accepted_at: user.terms_accepted_at } : MESSAGES.termsNotRecorded,
    has_verification_photo: user.verification_photo_key !== null,
    has_avatar: user.avatar_key !== null,
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
}

/** users/<id>/<kind>-<version>.<ext> → <kind>.<ext> */
function pictureName(kind: string, key: string | null): string | null {
  if (!key) return null;
  const extension = key.slice(key.lastIndexOf('.') + 1);
  return `${kind}.${/^[a-z0-9]{1,5}$/.test(extension) ? extension : 'bin'}`;
}
