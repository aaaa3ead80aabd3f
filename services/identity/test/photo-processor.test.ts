import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { NotAnImageError, PhotoProcessor } from '../src/domain/photo-processor.js';

const dir = mkdtempSync(join(tmpdir(), 'photos-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function file(name: string, bytes: Buffer | Promise<Buffer>): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, await bytes);
  return path;
}

const gpsJpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#884422' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withExif({ IFD0: { Make: 'Cam' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '40/1 44/1 0/1' } })
    .toBuffer();

describe('PhotoProcessor', () => {
  const photos = new PhotoProcessor();

  it('drops every piece of metadata and applies the orientation of a verification photo', async () => {
    const input = await gpsJpeg(400, 300);
    expect((await sharp(input).metadata()).exif).toBeDefined();
    const output = await photos.verificationPhoto(await file('gps.jpg', input));
    const metadata = await sharp(output.bytes).metadata();
    expect(output.contentType).toBe('image/jpeg');
    expect(metadata.exif).toBeUndefined();
    expect(metadata.xmp).toBeUndefined();
    expect([metadata.width, metadata.height]).toEqual([300, 400]);
  });

  it('shrinks large photos to 1600 px and makes square 512 px WebP avatars', async () => {
    const big = await file(
      'big.jpg',
      sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#123' } })
        .jpeg()
        .toBuffer(),
    );
    const photo = await sharp((await photos.verificationPhoto(big)).bytes).metadata();
    expect(Math.max(photo.width, photo.height)).toBe(1600);
    const avatar = await photos.avatar(big);
    const metadata = await sharp(avatar.bytes).metadata();
    expect([avatar.contentType, metadata.format, metadata.width, metadata.height]).toEqual(['image/webp', 'webp', 512, 512]);
  });

  it('refuses what is not an image, whatever it is called', async () => {
    await expect(photos.avatar(await file('fake.jpg', Buffer.from('GIF89a but not really')))).rejects.toBeInstanceOf(NotAnImageError);
    await expect(photos.avatar(await file('empty.png', Buffer.alloc(0)))).rejects.toBeInstanceOf(NotAnImageError);
    const svg = await file('x.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'));
    await expect(photos.avatar(svg)).rejects.toBeInstanceOf(NotAnImageError);
  });

  it('refuses a truncated image', async () => {
    const whole = await gpsJpeg(800, 600);
    await expect(photos.avatar(await file('cut.jpg', whole.subarray(0, 400)))).rejects.toBeInstanceOf(NotAnImageError);
  });

  it('refuses an image with more pixels than allowed (decompression bombs)', async () => {
    const small = new PhotoProcessor(1000);
    // Refused from its header alone, with a 413 that says why (not 'not an image').
    await expect(
      small.avatar(
        await file(
          'wide.png',
          sharp({ create: { width: 100, height: 100, channels: 3, background: '#000' } })
            .png()
            .toBuffer(),
        ),
      ),
    ).rejects.toMatchObject({
      status: 413,
      message: expect.stringContaining('too many pixels'),
    });
  });
});
