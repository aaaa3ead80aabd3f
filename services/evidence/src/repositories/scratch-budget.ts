/**
 * The local scratch space finished uploads may take at once in this process (UPLOAD_SCRATCH_BYTES):
 * a finished upload kept in S3 is read back whole into a local file for inspection (file-type and
 * ffprobe read it, the blob store stores it), and a pod's scratch is an emptyDir with a size limit
 * past which the kubelet evicts the pod, with every upload it was receiving. Each copy reserves its
 * size first; one that does not fit now is refused (the upload stays stored, and its client asks
 * again a moment later) instead of overrunning the scratch.
 */
export class ScratchBudget {
  private used = 0;

  constructor(readonly capacityBytes: number) {}

  /** Bytes reserved now. */
  get usedBytes(): number {
    return this.used;
  }

  /** Reserves the bytes: answers their release (once is enough, twice is harmless), or null when they do not fit now. */
  tryReserve(bytes: number): (() => void) | null {
    if (bytes <= 0) return () => undefined;
    if (this.used + bytes > this.capacityBytes) return null;
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
    };
  }
}

/** A finished upload that cannot be read back now: the scratch space is taken by others being finished. */
export class ScratchFull extends Error {
  override name = 'ScratchFull';
  /** Seconds after which the client may ask again (Retry-After). */
  readonly retryAfterSeconds = 5;

  constructor() {
    super(
      'Many uploads are being finished at this moment. Your file is safely stored: it will be added in a few seconds when your device tries again.',
    );
  }
}
