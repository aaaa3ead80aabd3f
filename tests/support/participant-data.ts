import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yauzl from 'yauzl';
import { newParticipant } from './accounts.js';
import type { ApiClient } from './api-client.js';
import { uploadEvidence, waitForFinalMedia, waitForMedia, type EvidenceItem } from './evidence.js';
import { makeTestVideo } from './media-fixtures.js';
import { phoneJpeg, photoBlob } from './media.js';

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Someone with everything a participant can leave in the portal, and the bytes they sent. */
export interface PopulatedParticipant {
  client: ApiClient;
  user: { id: string; username: string; email: string; phone_number: string; full_name: string };
  password: string;
  /** What they uploaded, by name: the registration photo, the avatar, an evidence photo and video. */
  uploads: Record<'verificationPhoto' | 'avatar' | 'photo' | 'video', Buffer>;
  photo: EvidenceItem;
  video: EvidenceItem;
  note: EvidenceItem;
}

/**
 * Registers a participant with a verification photo, sets an avatar, uploads a photo, a video and
 * a note, and waits until the media is processed. Files are made here with sharp and ffmpeg.
 */
export async function populatedParticipant(baseUrl: string, scratchDir: string, phone: string): Promise<PopulatedParticipant> {
  const verificationPhoto = await phoneJpeg({ width: 480, height: 640, orientation: 1 });
  const avatar = await phoneJpeg({ width: 300, height: 300, orientation: 1 });
  const photo = await phoneJpeg({ width: 800, height: 600, orientation: 6 });
  const photoPath = join(scratchDir, 'evidence-photo.jpg');
  const videoPath = join(scratchDir, 'evidence-video.mp4');
  await makeTestVideo(videoPath, { size: '320x240', rate: 15, seconds: 1 });
  writeFileSync(photoPath, photo);

  const { client, user, password } = await newParticipant(baseUrl, { phone_number: phone, full_name: 'Private Person' }, verificationPhoto);
  const profile = new FormData();
  for (const [name, value] of Object.entries({ email: user.email, phone_number: phone, pronouns: 'They/Them' }))
    profile.append(name, value);
  profile.append('file', photoBlob(avatar), 'me.jpg');
  const updated = await client.putForm('/api/evidence/user', profile);
  if (updated.status !== 200) throw new Error(`avatar not set: ${updated.status} ${updated.text}`);

  const photoItem = await uploadEvidence(
    client,
    photoPath,
    { title: 'A photo', notes: 'seen at noon', location: '40.71280, -74.00600 (±15 m)' },
    'image/jpeg',
  );
  const videoItem = await uploadEvidence(client, videoPath, { title: 'A video' }, 'video/mp4');
  const note = await client.post('/api/evidence', { title: 'A note', notes: 'Heard something' });
  if (photoItem.status !== 201 || videoItem.status !== 201 || note.status !== 201) throw new Error('evidence upload failed');
  const [readyPhoto, readyVideo] = await Promise.all([
    waitForMedia(client, photoItem.data.id),
    waitForFinalMedia(client, videoItem.data.id),
  ]);
  if (readyPhoto.media_status !== 'ready' || readyVideo.media_status !== 'ready') throw new Error('media processing failed');
  return {
    client,
    user: { ...user, phone_number: phone, full_name: 'Private Person' },
    password,
    uploads: { verificationPhoto, avatar, photo, video: readFileSync(videoPath) },
    photo: readyPhoto,
    video: readyVideo,
    note: note.data as EvidenceItem,
  };
}

/** Every file of a zip archive, by name (yauzl: a maintained, strict zip reader). */
export async function readZip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await promisify<Buffer, yauzl.Options, yauzl.ZipFile>(yauzl.fromBuffer)(bytes, { lazyEntries: true });
  const files = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          files.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return files;
}
