import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { phoneJpeg } from './media.js';

/**
 * Files an attacker (or a broken phone) might send, made in the test setup: nothing binary is
 * committed. Each is small; the "bombs" only claim huge dimensions in their headers.
 */
export interface HostileFiles {
  /** A normal phone JPEG (800x600), to show that the service still works after each attack. */
  goodJpeg: Buffer;
  /** The first 40 % of goodJpeg: cut off in the middle of the picture data. */
  truncatedJpeg: Buffer;
  /** goodJpeg's headers followed by garbage instead of picture data. */
  corruptJpeg: Buffer;
  /** A PNG whose header claims 50000 x 50000 pixels (2.5 gigapixels) over a few bytes of data. */
  pngBomb: Buffer;
  /** goodJpeg with its frame header rewritten to claim 50000 x 50000 pixels. */
  jpegBomb: Buffer;
  /** A real PNG, to be sent with a video's name and type. */
  png: Buffer;
  /** Plain text, to be sent as a JPEG. */
  text: Buffer;
  /** An HTML page with a script, to be sent as a PNG. */
  html: Buffer;
  /** An SVG with a script in it, to be sent as a PNG. */
  svg: Buffer;
  /** goodJpeg with a ZIP archive appended: a valid JPEG that unzip tools also open. */
  jpegZip: Buffer;
  /** A GIF whose header doubles as the start of a JavaScript comment, with a script after the trailer. */
  gifJs: Buffer;
}

/** The bytes of the local-file signature of a ZIP archive. */
export const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
export const GIF_SCRIPT = 'alert(document.cookie)';

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A greyscale PNG header claiming width x height, with only the first rows of (zero) pixels. */
function pngClaiming(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(0, 9); // greyscale
  const rows = deflateSync(Buffer.alloc((width + 1) * 4));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', rows),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A JPEG whose start-of-frame header is rewritten to claim width x height. */
function jpegClaiming(jpeg: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(jpeg);
  for (let i = 2; i < copy.length - 9; i++) {
    // SOF0..SOF2 (baseline, extended, progressive): FF C0/C1/C2, length, precision, height, width.
    if (copy[i] === 0xff && copy[i + 1]! >= 0xc0 && copy[i + 1]! <= 0xc2) {
      copy.writeUInt16BE(height, i + 5);
      copy.writeUInt16BE(width, i + 7);
      return copy;
    }
  }
  throw new Error('no frame header in the JPEG');
}

/** A ZIP archive holding one stored (uncompressed) file. */
function zipWith(name: string, content: Buffer): Buffer {
  const fileName = Buffer.from(name);
  const crc = crc32(content);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(10, 4); // version needed
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(content.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(fileName.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(10, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(content.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(fileName.length, 28);
  const localRecord = Buffer.concat([local, fileName, content]);
  const centralRecord = Buffer.concat([central, fileName]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(centralRecord.length, 12);
  end.writeUInt32LE(localRecord.length, 16);
  return Buffer.concat([localRecord, centralRecord, end]);
}

/** GIF89a whose logical screen width is the bytes '/*': the file parses as JavaScript too. */
function gifJavaScriptPolyglot(): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a/*', 'latin1'), // signature, then width 0x2a2f
    Buffer.from([0x01, 0x00, 0x00, 0x00, 0x00]), // height 1, no global colour table
    Buffer.from([0x2c, 0, 0, 0, 0, 0x01, 0x00, 0x01, 0x00, 0x80]), // image descriptor with a local colour table
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]), // two colours
    Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00]), // LZW data for one pixel
    Buffer.from(`;*/=1;${GIF_SCRIPT};`, 'latin1'), // trailer ';', then the end of the comment and a script
  ]);
}

export async function makeHostileFiles(): Promise<HostileFiles> {
  const goodJpeg = await phoneJpeg({ width: 800, height: 600, orientation: 1 });
  const scan = goodJpeg.indexOf(Buffer.from([0xff, 0xda]));
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 120, b: 200 } } })
    .png()
    .toBuffer();
  return {
    goodJpeg,
    truncatedJpeg: goodJpeg.subarray(0, Math.floor(goodJpeg.length * 0.4)),
    corruptJpeg: Buffer.concat([goodJpeg.subarray(0, scan + 2), Buffer.alloc(20_000, 7)]),
    pngBomb: pngClaiming(50_000, 50_000),
    jpegBomb: jpegClaiming(goodJpeg, 50_000, 50_000),
    png,
    text: Buffer.from('this is not a picture, only words\n'.repeat(50)),
    html: Buffer.from('<!doctype html><html><body><script>alert(document.cookie)</script></body></html>\n'),
    svg: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.cookie)</script></svg>'),
    jpegZip: Buffer.concat([goodJpeg, zipWith('payload.html', Buffer.from('<script>alert(1)</script>'))]),
    gifJs: gifJavaScriptPolyglot(),
  };
}

export interface MultipartFile {
  field: string;
  /** Sent as is in the part header: may hold '../', NUL bytes or thousands of characters. */
  filename: string;
  type: string;
  bytes: Buffer;
}

/** A multipart/form-data body built byte by byte, so that file names arrive exactly as written. */
export function multipartBody(fields: Record<string, string>, file?: MultipartFile): { body: Buffer; contentType: string } {
  const boundary = `----portal-${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface RawExchange {
  /** Every status line the server wrote on the connection, in order. */
  statuses: number[];
  /** Everything the server wrote. */
  text: string;
}

/**
 * Sends bytes over a plain TCP connection, so that the request may lie (a Content-Length that
 * does not match the body), then half-closes (the client has nothing more to say) and reads
 * what the server answers until it closes the connection or the time is up.
 */
export function rawHttp(baseUrl: string, head: string[], body: Buffer, { timeoutMs = 15_000 } = {}): Promise<RawExchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ statuses: [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => Number(match[1])), text });
    };
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset the connection after answering; what it wrote is still read.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('connect', () => {
      socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
      socket.end();
    });
  });
}

/** The JSON body of the first answer in a raw exchange, if it has one. */
export function firstJsonBody(exchange: RawExchange): { code?: string; message?: string } | undefined {
  const end = exchange.text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headers = exchange.text.slice(0, end);
  let body = exchange.text.slice(end + 4);
  const length = /^content-length: *(\d+)/im.exec(headers);
  if (length) body = body.slice(0, Number(length[1]));
  else if (/^transfer-encoding: *chunked/im.test(headers)) {
    const size = /^([0-9a-f]+)\r\n/i.exec(body);
    body = size ? body.slice(size[0].length, size[0].length + parseInt(size[1]!, 16)) : '';
  }
  try {
    return JSON.parse(Buffer.from(body, 'latin1').toString('utf8'));
  } catch {
    return undefined;
  }
}
