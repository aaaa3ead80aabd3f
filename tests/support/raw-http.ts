import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the server sent `100 Continue` before its answer. */
  continued: boolean;
  /** Milliseconds from the start of the request to the end of the answer. */
  ms: number;
}

export interface RawRequest {
  method: string;
  headers?: Record<string, string>;
  /** The body, sent whole (after 100 Continue when the request expects it). */
  body?: Buffer | string;
  /** Only these first bytes of the body are sent; the rest never comes (a stalled client). */
  partial?: Buffer | string;
}

/**
 * One request with Node's own client, exactly as a curl-like client sends it: headers as given
 * (Expect: 100-continue included, which fetch cannot send), and the body held back until the
 * server says `100 Continue` when the request expects it.
 */
export function rawRequest(url: string, { method, headers = {}, body, partial }: RawRequest): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const expects = Object.entries(headers).some(([name, value]) => name.toLowerCase() === 'expect' && /100-continue/i.test(value));
    const req = request(url, { method, headers });
    let continued = false;
    req.on('continue', () => {
      continued = true;
      if (body !== undefined) req.end(body);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, continued, ms: Date.now() - started });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (partial !== undefined) {
      req.flushHeaders();
      req.write(partial);
    } else if (!expects) {
      req.end(body);
    } else {
      req.flushHeaders();
    }
  });
}

/** A multipart body with one file field and text fields, as a browser form sends it. */
export function multipartBody(
  fields: Record<string, string>,
  file?: { field: string; name: string; type: string; bytes: Buffer },
): { body: Buffer; contentType: string } {
  const boundary = `----portal-test-${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
    );
    parts.push(file.bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
