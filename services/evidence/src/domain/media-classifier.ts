import { fileTypeFromFile } from 'file-type';
import { MEDIA_TYPES, MESSAGES, type MediaType } from '@portal/contracts';
import {
  capBreach,
  demuxerForExtension,
  formatAgrees,
  hasAudioTrack,
  hasVideoTrack,
  payloadTooLarge,
  probeMedia,
  unsupportedMediaType,
  type MediaCaps,
  type ProbeResult,
} from '@portal/platform';

export interface ClassifiedFile {
  media_type: Exclude<MediaType, 1>;
  /** The content type found in the bytes. */
  contentType: string;
  extension: string;
  /** The ffmpeg demuxer every later run on the file must use (null for pictures, which sharp reads). */
  demuxer: string | null;
}

const IMAGES = new Set(['jpg', 'png', 'webp', 'gif', 'avif', 'tif', 'bmp']);
const HEIF = new Set(['heic', 'heif', 'heics', 'heifs']);
// Containers that may hold a picture track, a sound track or both: ffprobe decides.
const AUDIO_OR_VIDEO = new Set([
  'mp4',
  'mov',
  'm4v',
  'webm',
  'mkv',
  '3gp',
  '3g2',
  'avi',
  'mpg',
  'mts',
  'ogg',
  'ogv',
  'm4a',
  'f4v',
  'flv',
  'wmv',
  'asf',
]);
const AUDIO = new Set(['mp3', 'm4a', 'aac', 'wav', 'opus', 'oga', 'flac', 'amr', 'wma', 'aiff', 'caf', 'mka']);

const unsupported = () => unsupportedMediaType(MESSAGES.unsupportedEvidenceFile, { file: MESSAGES.unsupportedEvidenceFile });

/**
 * Decides what an uploaded file is from its bytes (file-type reads the signature; ffprobe looks
 * inside containers such as WebM or MP4, which a browser's audio recorder also produces). The
 * name and the type the client claimed play no part.
 *
 * ffprobe reads the file with the demuxer of the container file-type found and no other (see
 * media-containers.ts in the platform): a file that is one thing to file-type and another to
 * ffmpeg (a playlist behind an FLV or FLAC signature) is refused here, and the demuxer travels
 * with the media job so that the worker reads the file the same way. Videos and recordings over
 * the duration cap, and files with more tracks than the cap, are refused too.
 */
export async function classifyMediaFile(path: string, caps: MediaCaps): Promise<ClassifiedFile> {
  const found = await fileTypeFromFile(path);
  if (!found) throw unsupported();
  if (IMAGES.has(found.ext)) return { media_type: MEDIA_TYPES.image, contentType: found.mime, extension: found.ext, demuxer: null };
  if (HEIF.has(found.ext)) throw unsupportedMediaType(MESSAGES.heicNotSupported, { file: MESSAGES.heicNotSupported });
  const demuxer = demuxerForExtension(found.ext);
  if (!demuxer || !(AUDIO_OR_VIDEO.has(found.ext) || AUDIO.has(found.ext))) throw unsupported();
  let probe: ProbeResult;
  try {
    probe = await probeMedia(path, { demuxer });
  } catch {
    throw unsupported();
  }
  // Forced, the demuxer is what ffprobe reports; checked all the same, as the rule it is.
  if (!formatAgrees(probe.format.format_name, demuxer)) throw unsupported();
  const kind = hasVideoTrack(probe) && !AUDIO.has(found.ext) ? 'video' : hasAudioTrack(probe) ? 'audio' : null;
  if (!kind) throw unsupported();
  const breach = capBreach(probe, kind, caps);
  if (breach?.cap === 'duration') throw payloadTooLarge(breach.message);
  if (breach) throw unsupportedMediaType(breach.message, { file: breach.message });
  return kind === 'video'
    ? { media_type: MEDIA_TYPES.video, contentType: found.mime, extension: found.ext, demuxer }
    : { media_type: MEDIA_TYPES.audio, contentType: found.mime.replace(/^video\//, 'audio/'), extension: found.ext, demuxer };
}
