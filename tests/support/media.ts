import sharp from 'sharp';

/**
 * A JPEG like a phone makes: EXIF with a GPS position and the camera's orientation flag, so that
 * tests can check that the portal strips the position and applies the orientation.
 */
export async function phoneJpeg({ width = 640, height = 480, orientation = 6 } = {}): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .jpeg()
    .withMetadata({ orientation })
    .withExif({
      IFD0: { Make: 'TestPhone', Model: 'Informant 1' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '40/1 44/1 5424/100', GPSLongitudeRef: 'W', GPSLongitude: '73/1 59/1 1080/100' },
    })
    .toBuffer();
}

export function photoBlob(bytes: Buffer, type = 'image/jpeg'): Blob {
  return new Blob([new Uint8Array(bytes)], { type });
}

/** A registration form with every field valid; override what a test is about. */
export function registrationForm(
  fields: Record<string, string | undefined>,
  photo?: { bytes: Buffer; name?: string; type?: string } | null,
): FormData {
  const form = new FormData();
  const defaults: Record<string, string> = {
    username: 'informant',
    password: 'password1',
    email: 'informant@example.org',
    usernameOrEmail: 'informant@example.org',
    phone_number: '5551234567',
    full_name: 'Ida Informant',
    pronouns: 'They/Them',
    role: '1',
  };
  for (const [name, value] of Object.entries({ ...defaults, ...fields })) {
    if (value !== undefined) form.append(name, value);
  }
  if (photo) form.append('verification_photo', photoBlob(photo.bytes, photo.type ?? 'image/jpeg'), photo.name ?? 'face.jpg');
  return form;
}
