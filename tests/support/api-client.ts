import { Agent } from 'undici';

/**
 * A small HTTP client for tests that keeps cookies like a browser would (per client), so that
 * several people can be simulated side by side against one portal.
 */
export class ApiClient {
  readonly cookies = new Map<string, string>();

  private readonly agent: Agent | undefined;

  /**
   * `fromAddress` (a loopback address such as 127.0.0.2) makes the requests come from that client
   * address, as another phone on another network would: per-address limits count it apart.
   */
  constructor(
    readonly baseUrl: string,
    options: { fromAddress?: string } = {},
  ) {
    this.agent = options.fromAddress ? new Agent({ localAddress: options.fromAddress }) : undefined;
  }

  async request(method: string, path: string, init: { json?: unknown; form?: FormData; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: BodyInit | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.form) {
      body = init.form;
    }
    const url = new URL(path, this.baseUrl);
    const response = await fetch(url, {
      method,
      headers,
      body,
      redirect: 'manual',
      ...(this.agent ? ({ dispatcher: this.agent } as object) : {}),
    });
    this.remember(response);
    const text = await response.text();
    let data: any = undefined;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = text;
    }
    return { status: response.status, headers: response.headers, data, text };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }
  post(path: string, json?: unknown) {
    return this.request('POST', path, { json });
  }
  put(path: string, json?: unknown) {
    return this.request('PUT', path, { json });
  }
  delete(path: string) {
    return this.request('DELETE', path);
  }
  postForm(path: string, form: FormData) {
    return this.request('POST', path, { form });
  }
  putForm(path: string, form: FormData) {
    return this.request('PUT', path, { form });
  }

  async bytes(path: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(new URL(path, this.baseUrl), { headers });
    return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
  }

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key, val] = attribute.trim().split('=');
        return (
          (key?.toLowerCase() === 'max-age' && Number(val) <= 0) || (key?.toLowerCase() === 'expires' && Date.parse(val ?? '') < Date.now())
        );
      });
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}
