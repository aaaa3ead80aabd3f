/**
 * The file itself cannot be turned into media (corrupt, truncated, no usable track, over a cap):
 * trying again will not help. The message is shown to the participant, so it is a sentence of
 * the portal's own, never a path or ffmpeg's output; those go in `detail`, for the log only.
 */
export class UnprocessableMediaError extends Error {
  override name = 'UnprocessableMediaError';
  /** What went wrong in full (ffmpeg's last lines, a decoder's message): for the log only. */
  readonly detail: string | undefined;

  constructor(reason: string, detail?: string) {
    super(reason);
    this.detail = detail;
  }
}
