import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeMedia } from '@portal/platform';
import { DEFAULT_FACE_MIN_CONFIDENCE } from '../../services/media-worker/src/config.js';
import { sharedFaceDetector, type FaceDetector } from '../../services/media-worker/src/faces/face-detector.js';
import { facesInPicture } from '../../services/media-worker/src/faces/picture-faces.js';
import { videoFaces } from '../../services/media-worker/src/faces/video-faces.js';

/**
 * The portal's own face detector, for tests that check what a visitor and an owner are served:
 * the faces it finds in a picture's bytes, and in a video's (sampled 4 times a second).
 */
export class FaceCounter {
  private readonly detector: FaceDetector = sharedFaceDetector({ minConfidence: DEFAULT_FACE_MIN_CONFIDENCE });

  async inPicture(bytes: Buffer): Promise<number> {
    return (await facesInPicture(this.detector, bytes)).length;
  }

  /** Faces followed through a video (0 when no sample shows one), and the samples looked at. */
  async inVideo(bytes: Buffer): Promise<{ faces: number; samples: number }> {
    const dir = mkdtempSync(join(tmpdir(), 'face-count-'));
    try {
      const path = join(dir, 'video.mp4');
      writeFileSync(path, bytes);
      const stream = (await probeMedia(path, { demuxer: 'mov' })).streams.find((s) => s.codec_type === 'video')!;
      const found = await videoFaces(this.detector, path, { width: stream.width!, height: stream.height! }, 4, {
        niceness: 0,
        allowedMs: 120_000,
      });
      return { faces: found.regions.length, samples: found.samples };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  close(): Promise<void> {
    return this.detector.close();
  }
}
