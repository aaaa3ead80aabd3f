import { fileTypeFromFile } from 'file-type';
import { MEDIA_TYPES, MESSAGES, type MediaType } from '@portal/contracts';
import { hasAudioTrack, hasVideoTrack, probeMedia, unsupportedMediaType } from '@portal/platform';

export interface ClassifiedFile {
  media_type: Exclude<MediaType, 1>;
  /** The content type found in the bytes. */
  contentType: string;
  extension: string;
}

const IMAGES = new Set(['jpg', 'png', 'webp', 'gif', 'avif', 'tif', 'bmp']);
const HEIF = new Set(['heic', 'heif', 'heics', 'heifs']);
// Containers that may hold a picture track, a sound track or both: ffprobe decides.
const AUDIO_OR_VIDEO = new Set(['mp4', 'mov', 'm4v', 'webm', 'mkv', '3gp', '3g2', 'avi', 'mpg', 'mts', 'ogg', 'ogv', 'm4a', 'f4v', 'flv', 'wmv', 'asf']);
const AUDIO = new Set(['mp3', 'm4a', 'aac', 'wav', 'opus', 'oga', 'flac', 'amr', 'wma', 'aiff', 'caf', 'mka']);

/**
 * Decides what an uploaded file is from its bytes (file-type reads the signature; ffprobe looks
 * inside containers such as WebM or MP4, which a browser's audio recorder also produces). The
 * name and the type the client claimed play no part.
 */
export async function classifyMediaFile(path: string): Promise<ClassifiedFile> {
  const found = await fileTypeFromFile(path);
  if (!found) throw unsupportedMediaType(MESSAGES.unsupportedEvidenceFile, { file: MESSAGES.unsupportedEvidenceFile });
  if (IMAGES.has(found.ext)) return { media_type: MEDIA_TYPES.image, contentType: found.mime, extension: found.ext };
  if (HEIF.has(found.ext)) throw unsupportedMediaType(MESSAGES.heicNotSupported, { file: MESSAGES.heicNotSupported });
  if (AUDIO_OR_VIDEO.has(found.ext) || AUDIO.has(found.ext)) {
    let probe;
    try {
      probe = await probeMedia(path);
    } catch {
      throw unsupportedMediaType(MESSAGES.unsupportedEvidenceFile, { file: MESSAGES.unsupportedEvidenceFile });
    }
    if (hasVideoTrack(probe) && !AUDIO.has(found.ext)) {
      return { media_type: MEDIA_TYPES.video, contentType: found.mime, extension: found.ext };
    }
    if (hasAudioTrack(probe)) {
      return { media_type: MEDIA_TYPES.audio, contentType: found.mime.replace(/^video\//, 'audio/'), extension: found.ext };
    }
  }
  throw unsupportedMediaType(MESSAGES.unsupportedEvidenceFile, { file: MESSAGES.unsupportedEvidenceFile });
}
