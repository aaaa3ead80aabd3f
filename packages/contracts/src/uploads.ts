/**
 * How the web app cuts a file into the PATCH requests of a resumable (tus) upload.
 *
 * Every PATCH costs the portal a few milliseconds beyond its bytes (session, proxy, identity
 * token, reading the upload's state, opening its file), so a large file goes in fewer, larger
 * chunks: about UPLOAD_CHUNK_COUNT of them, between UPLOAD_CHUNK_MIN and UPLOAD_CHUNK_MAX. What a
 * phone usually sends (a photo, a minute of video) still goes in 5 MiB chunks, which a weak mobile
 * connection carries in well under a minute. A chunk cut off half-way loses nothing: the server
 * keeps the bytes that arrived and the upload goes on from there.
 */
export const UPLOAD_CHUNK_MIN = 5 * 1024 * 1024;
export const UPLOAD_CHUNK_MAX = 24 * 1024 * 1024;
export const UPLOAD_CHUNK_COUNT = 40;

const MiB = 1024 * 1024;

/** The chunk size for a file of this many bytes: a whole number of MiB. */
export function uploadChunkSize(fileSize: number): number {
  const even = Math.ceil(Math.max(0, fileSize) / UPLOAD_CHUNK_COUNT / MiB) * MiB;
  return Math.min(UPLOAD_CHUNK_MAX, Math.max(UPLOAD_CHUNK_MIN, even));
}
