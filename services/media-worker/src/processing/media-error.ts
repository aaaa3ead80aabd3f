/** The file itself cannot be turned into media (corrupt, truncated, no usable track): trying again will not help. */
export class UnprocessableMediaError extends Error {
  override name = 'UnprocessableMediaError';
}
