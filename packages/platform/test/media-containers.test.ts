import { describe, expect, it } from 'vitest';
import {
  FFMPEG_TIME_LIMIT_SECONDS,
  MEDIA_DEMUXERS,
  capBreach,
  demuxerForExtension,
  describeSeconds,
  formatAgrees,
  mediaCapsFromEnv,
  mediaInputOptions,
  type ProbeResult,
} from '../src/index.js';

// ffmpeg demuxers that read other files named inside the input, or patterns of files.
const LIST_DEMUXERS = [
  'hls',
  'applehttp',
  'dash',
  'concat',
  'ffconcat',
  'sdp',
  'rtsp',
  'tee',
  'image2',
  'image2pipe',
  'mpjpeg',
  'data',
  'lavfi',
  'subfile',
  'ffmetadata',
  'webm_dash_manifest',
];

describe('media containers', () => {
  it('reads every container the upload check takes with a media demuxer, never a playlist or script demuxer', () => {
    for (const extension of ['mp4', 'mov', 'm4a', 'webm', 'mkv', 'flv', 'flac', 'mp3', 'ogg', 'opus', 'wav', 'avi', 'wmv']) {
      expect(MEDIA_DEMUXERS).toContain(demuxerForExtension(extension));
    }
    for (const name of LIST_DEMUXERS) expect(MEDIA_DEMUXERS).not.toContain(name);
    for (const extension of ['m3u8', 'mpd', 'ffconcat', 'sdp', 'txt', 'xml', 'toString', '__proto__'])
      expect(demuxerForExtension(extension)).toBeNull();
  });

  it('names the demuxer, allows it alone and the file protocol alone; refuses to name any other', () => {
    expect(mediaInputOptions('flv')).toEqual(['-f', 'flv', '-format_whitelist', 'flv', '-protocol_whitelist', 'file']);
    expect(mediaInputOptions(null)).toEqual(['-format_whitelist', MEDIA_DEMUXERS.join(','), '-protocol_whitelist', 'file']);
    for (const name of LIST_DEMUXERS) expect(() => mediaInputOptions(name)).toThrow(/not a media demuxer/);
  });

  it("compares ffprobe's format_name with the demuxer", () => {
    expect(formatAgrees('mov,mp4,m4a,3gp,3g2,mj2', 'mov')).toBe(true);
    expect(formatAgrees('matroska,webm', 'matroska')).toBe(true);
    expect(formatAgrees('hls', 'flv')).toBe(false);
    expect(formatAgrees(undefined, 'flv')).toBe(false);
  });
});

describe('media caps', () => {
  const probe = (duration: string | undefined, streams: number): ProbeResult => ({
    streams: Array.from({ length: streams }, () => ({ codec_type: 'audio' })),
    format: duration === undefined ? {} : { duration },
  });

  it('defaults to 30 minutes of video, 4 hours of sound, 16 tracks and what a phone records, and reads the environment', () => {
    expect(mediaCapsFromEnv({})).toEqual({
      maxVideoSeconds: 1800,
      maxAudioSeconds: 14_400,
      maxStreams: 16,
      maxVideoSide: 8192,
      maxVideoPixels: 33_177_600,
      maxVideoFps: 240,
      maxVideoPixelBudget: 150e9,
    });
    expect(
      mediaCapsFromEnv({
        MEDIA_MAX_VIDEO_SECONDS: '600',
        MEDIA_MAX_AUDIO_SECONDS: '90',
        MEDIA_MAX_STREAMS: '4',
        MEDIA_MAX_VIDEO_SIDE: '4096',
        MEDIA_MAX_VIDEO_PIXELS: '8294400',
        MEDIA_MAX_VIDEO_FPS: '120',
        MEDIA_MAX_VIDEO_PIXEL_BUDGET: '2e10',
      }),
    ).toEqual({
      maxVideoSeconds: 600,
      maxAudioSeconds: 90,
      maxStreams: 4,
      maxVideoSide: 4096,
      maxVideoPixels: 8_294_400,
      maxVideoFps: 120,
      maxVideoPixelBudget: 2e10,
    });
    expect(() => mediaCapsFromEnv({ MEDIA_MAX_VIDEO_SECONDS: 'long' })).toThrow(/MEDIA_MAX_VIDEO_SECONDS/);
  });

  // The cap was 2 hours while ffmpeg is stopped after 30 minutes: a 2-hour video was taken, then
  // converted three times for half an hour each and failed.
  it('refuses a video cap longer than ffmpeg may run, and says why', () => {
    expect(FFMPEG_TIME_LIMIT_SECONDS).toBe(1800);
    expect(mediaCapsFromEnv({ MEDIA_MAX_VIDEO_SECONDS: '1800' }).maxVideoSeconds).toBe(FFMPEG_TIME_LIMIT_SECONDS);
    expect(() => mediaCapsFromEnv({ MEDIA_MAX_VIDEO_SECONDS: '7200' })).toThrow(
      /MEDIA_MAX_VIDEO_SECONDS.*at most 1800: ffmpeg is stopped after 30 minutes, and a longer video could never be converted/,
    );
  });

  it('says which cap a probed file breaks, in words a participant reads', () => {
    const caps = mediaCapsFromEnv({});
    expect(capBreach(probe('1800', 2), 'video', caps)).toBeNull();
    expect(capBreach(probe('1800.5', 2), 'video', caps)).toEqual({ cap: 'duration', message: 'Videos can be at most 30 minutes long' });
    expect(capBreach(probe('14401', 1), 'audio', caps)).toEqual({ cap: 'duration', message: 'Recordings can be at most 4 hours long' });
    expect(capBreach(probe(undefined, 1), 'audio', caps)).toBeNull();
    expect(capBreach(probe('10', 17), 'audio', caps)).toEqual({
      cap: 'streams',
      message: 'This file has more tracks than the portal takes (at most 16)',
    });
    const video = (width: number, height: number, rate?: string, attached = 0): ProbeResult => ({
      streams: [{ codec_type: 'video', width, height, ...(rate ? { avg_frame_rate: rate } : {}), disposition: { attached_pic: attached } }],
      format: { duration: '10' },
    });
    expect(capBreach(video(7680, 4320, '30000/1001'), 'video', caps)).toBeNull();
    expect(capBreach(video(1080, 1920, '240/1'), 'video', caps)).toBeNull();
    expect(capBreach(video(8200, 64, '30/1'), 'video', caps)).toEqual({
      cap: 'picture',
      message: "This video's picture is larger than the portal takes (at most 8192 pixels a side)",
    });
    expect(capBreach(video(64, 9000), 'audio', caps)?.cap).toBe('picture');
    expect(capBreach(video(64, 64, '1000/1'), 'video', caps)).toEqual({
      cap: 'frame-rate',
      message: 'This video has more frames a second than the portal takes (at most 240)',
    });
    expect(capBreach(video(8000, 8000, '1/1'), 'video', caps)).toEqual({
      cap: 'pixels',
      message: "This video's picture has more pixels than the portal takes (at most 33.2 million a frame)",
    });
    // The budget: what a phone records passes, each cap kept alone but all together does not.
    const long = (width: number, height: number, rate: string, seconds: number): ProbeResult => ({
      streams: [{ codec_type: 'video', width, height, avg_frame_rate: rate, disposition: { attached_pic: 0 } }],
      format: { duration: String(seconds) },
    });
    expect(capBreach(long(1920, 1080, '30/1', 1800), 'video', caps)).toBeNull();
    expect(capBreach(long(3840, 2160, '60/1', 300), 'video', caps)).toBeNull();
    expect(capBreach(long(7680, 4320, '30/1', 120), 'video', caps)).toBeNull();
    expect(capBreach(long(1920, 1080, '240/1', 300), 'video', caps)).toBeNull();
    expect(capBreach(long(3840, 2160, '60/1', 1800), 'video', caps)).toEqual({
      cap: 'pixel-budget',
      message: 'At 3840×2160 pixels and 60 frames a second, a video can be at most 5 minutes long: this one is longer',
    });
    expect(capBreach(long(7680, 4320, '240/1', 1800), 'video', caps)?.cap).toBe('pixel-budget');
    expect(capBreach(long(7680, 4320, '30/1', 120), 'audio', caps)).toBeNull();
    // Unknown rates (a recorder's live WebM says 0/0) and a cover picture's track are not refused.
    expect(capBreach(video(64, 64, '0/0'), 'video', caps)).toBeNull();
    expect(capBreach(video(64, 64, 'fast'), 'video', caps)).toBeNull();
    expect(capBreach(video(600, 600, '90000/1', 1), 'audio', caps)).toBeNull();
    expect([describeSeconds(5400), describeSeconds(90), describeSeconds(1), describeSeconds(3600)]).toEqual([
      '90 minutes',
      '90 seconds',
      '1 second',
      '1 hour',
    ]);
  });
});
