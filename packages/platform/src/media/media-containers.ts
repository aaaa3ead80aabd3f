/**
 * The containers the portal reads with ffmpeg, and how ffmpeg is told to read them.
 *
 * ffmpeg guesses the container of an input from its bytes unless it is told, and some of the
 * containers it knows are not media but lists of other files to read (HLS and DASH playlists,
 * concat scripts, SDP, image sequences...). A file whose first bytes look like FLV to the upload
 * check but like an HLS playlist to ffmpeg (the two skip an ID3 tag by different lengths) made
 * ffmpeg read a file named in the playlist from the server's disk. So every ffprobe and ffmpeg run
 * on an upload names its demuxer (the one the upload check chose from the bytes), allows only
 * that demuxer (nested opens included) and only the `file` protocol.
 */

/** The demuxer of each container the upload check accepts, by file-type's extension. */
const DEMUXER_BY_EXTENSION: Readonly<Record<string, string>> = {
  mp4: 'mov',
  mov: 'mov',
  m4v: 'mov',
  m4a: 'mov',
  '3gp': 'mov',
  '3g2': 'mov',
  f4v: 'mov',
  webm: 'matroska',
  mkv: 'matroska',
  mka: 'matroska',
  avi: 'avi',
  mpg: 'mpeg',
  mts: 'mpegts',
  ogg: 'ogg',
  ogv: 'ogg',
  oga: 'ogg',
  opus: 'ogg',
  flv: 'flv',
  wmv: 'asf',
  asf: 'asf',
  wma: 'asf',
  mp3: 'mp3',
  aac: 'aac',
  wav: 'wav',
  flac: 'flac',
  amr: 'amr',
  aiff: 'aiff',
  caf: 'caf',
};

/** Every demuxer the portal ever runs on an upload: containers of media, never lists of other files. */
export const MEDIA_DEMUXERS: readonly string[] = [...new Set(Object.values(DEMUXER_BY_EXTENSION))].sort();

/** The demuxer for a container file-type found (its extension), or null when the portal does not read it. */
export function demuxerForExtension(extension: string): string | null {
  return Object.hasOwn(DEMUXER_BY_EXTENSION, extension) ? DEMUXER_BY_EXTENSION[extension]! : null;
}

export function isMediaDemuxer(name: string): boolean {
  return MEDIA_DEMUXERS.includes(name);
}

/**
 * The input options of every ffprobe or ffmpeg run on a file: that demuxer and no other (nested
 * opens included), local files only. Without a demuxer (a job queued before demuxers were
 * recorded) ffmpeg may choose, but only among the media demuxers.
 */
export function mediaInputOptions(demuxer: string | null): string[] {
  if (demuxer !== null && !isMediaDemuxer(demuxer)) throw new Error(`not a media demuxer: ${demuxer}`);
  return [...(demuxer ? ['-f', demuxer] : []), '-format_whitelist', demuxer ?? MEDIA_DEMUXERS.join(','), '-protocol_whitelist', 'file'];
}

/** A local path as an ffmpeg input: `file:` so that nothing in the name is read as another protocol. */
export function fileInput(path: string): string {
  return `file:${path}`;
}

/** True when ffprobe's format_name (e.g. "mov,mp4,m4a,3gp,3g2,mj2") is the demuxer's. */
export function formatAgrees(formatName: string | undefined, demuxer: string): boolean {
  return (formatName ?? '').split(',').includes(demuxer);
}
