import { Transform, type Readable, type TransformCallback } from 'node:stream';

/**
 * A request body on its way to a service: passed on unchanged, counted (a chunked body has no
 * declared length to refuse early), and watched for a client that stops sending. Time spent
 * waiting for the service to take the bytes (they are buffered here) is not the client's.
 */
export class BodyWatch extends Transform {
  private received = 0;
  private lastByteAt = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: Readable,
    private readonly maxBytes: number,
    private readonly idleMs: number,
    private readonly onStall: () => void,
    private readonly onTooLarge: () => void,
  ) {
    // As much buffered as a socket read brings at once, so that a chunk passes in one step.
    super({ highWaterMark: 64 * 1024 });
    this.arm(idleMs);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    this.lastByteAt = Date.now();
    if (this.received > this.maxBytes) {
      this.stop();
      this.onTooLarge();
      return;
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.stop();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stop();
    callback(error);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    if (this.destroyed || this.writableEnded) return;
    // Bytes that arrived and wait for the service to take them: the slow side is ours.
    if (this.readableLength > 0 || this.writableLength > 0 || this.source.readableLength > 0) this.lastByteAt = Date.now();
    const quietFor = Date.now() - this.lastByteAt;
    if (quietFor < this.idleMs) {
      this.arm(this.idleMs - quietFor);
      return;
    }
    this.onStall();
  }
}
