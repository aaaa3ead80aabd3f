import { boxOverlap, type FaceBox, type FaceRegion } from '@portal/contracts';
import type { DetectedFace } from './face-detector.js';

/** The faces found in one sample of a video, at second `t`. */
export interface FaceSample {
  t: number;
  faces: DetectedFace[];
}

/**
 * Samples a face may be missing from (looking down, behind a passer-by) before its track ends: in
 * between, the box holding its last and next positions covers it.
 */
export const TRACK_GAP_SAMPLES = 2;

const round = (value: number) => Math.round(value * 10_000) / 10_000;
const keyframe = (t: number, face: FaceBox) => ({ t: round(t), x: round(face.x), y: round(face.y), w: round(face.w), h: round(face.h) });

/** A photo's regions: one position each. */
export function photoRegions(faces: readonly DetectedFace[]): FaceRegion[] {
  return faces.map((face, index) => ({
    id: `f${index + 1}`,
    source: 'detected',
    score: round(face.score),
    removed: false,
    track: [keyframe(0, face)],
  }));
}

/** How close a face in this sample is to a track's last position: its overlap, or a near centre. */
function nearness(last: FaceBox, face: FaceBox): number {
  const overlap = boxOverlap(last, face);
  if (overlap > 0) return overlap;
  const dx = last.x + last.w / 2 - (face.x + face.w / 2);
  const dy = last.y + last.h / 2 - (face.y + face.h / 2);
  const distance = Math.hypot(dx, dy) / Math.max(last.w, last.h, face.w, face.h);
  // A face that moved up to its own size between two samples (someone walking past close by).
  return distance < 1 ? (1 - distance) * 0.1 : 0;
}

/**
 * A video's faces, sample after sample, joined into regions that follow each face: every face of
 * a sample goes to the closest track still open (overlapping, or moved less than its own size),
 * else starts one; a track left without a face for more than TRACK_GAP_SAMPLES samples ends.
 */
export function trackFaces(samples: readonly FaceSample[], interval: number): FaceRegion[] {
  const tracks: { region: FaceRegion; lastT: number }[] = [];
  for (const sample of samples) {
    const open = tracks.filter((track) => sample.t - track.lastT <= interval * (TRACK_GAP_SAMPLES + 1) + 1e-6);
    const pairs: { track: (typeof tracks)[number]; face: DetectedFace; score: number }[] = [];
    for (const track of open) {
      const last = track.region.track[track.region.track.length - 1]!;
      for (const face of sample.faces) {
        const score = nearness(last, face);
        if (score > 0) pairs.push({ track, face, score });
      }
    }
    pairs.sort((a, b) => b.score - a.score);
    const usedTracks = new Set<unknown>();
    const usedFaces = new Set<DetectedFace>();
    for (const { track, face } of pairs) {
      if (usedTracks.has(track) || usedFaces.has(face)) continue;
      usedTracks.add(track);
      usedFaces.add(face);
      track.region.track.push(keyframe(sample.t, face));
      track.region.score = Math.max(track.region.score ?? 0, round(face.score));
      track.lastT = sample.t;
    }
    for (const face of sample.faces) {
      if (usedFaces.has(face)) continue;
      tracks.push({
        region: {
          id: `f${tracks.length + 1}`,
          source: 'detected',
          score: round(face.score),
          removed: false,
          track: [keyframe(sample.t, face)],
        },
        lastT: sample.t,
      });
    }
  }
  return tracks.map((track) => track.region);
}
