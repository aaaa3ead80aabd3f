import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { evidenceExportSchema, postedCountsSchema, type EvidenceExport, type PostedCounts } from '@portal/contracts';
import { HttpError, SERVICE_TOKEN_HEADER, ServiceTokenSource, type IdentityTokens } from '@portal/platform';

/** What the export needs from the evidence service (its internal routes, over HTTP). */
export interface EvidenceSource {
  /** Every item of the participant with every stored field, and the files each has. */
  itemsOf(userId: string): Promise<EvidenceExport['items']>;
  /** One file of an item, as a stream (never whole in memory). */
  openFile(itemId: string, variant: string): Promise<Readable>;
  /** How many items of each kind were posted after the time (the moderator digest). */
  postedSince(since: string): Promise<PostedCounts>;
}

const unavailable = () =>
  new HttpError(503, 'service_unavailable', 'The evidence service did not answer, so the export could not be made. Try again in a minute.');

/** Calls the evidence service's /internal routes with this service's token. */
export class HttpEvidenceSource implements EvidenceSource {
  private readonly token: ServiceTokenSource;

  constructor(
    private readonly baseUrl: string,
    tokens: IdentityTokens,
  ) {
    this.token = new ServiceTokenSource(tokens, 'identity');
  }

  async itemsOf(userId: string): Promise<EvidenceExport['items']> {
    const response = await this.get(`/internal/users/${encodeURIComponent(userId)}/evidence`);
    return evidenceExportSchema.parse(await response.json()).items;
  }

  async openFile(itemId: string, variant: string): Promise<Readable> {
    const response = await this.get(`/internal/evidence/${encodeURIComponent(itemId)}/files/${encodeURIComponent(variant)}`);
    if (!response.body) throw unavailable();
    return Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  }

  async postedSince(since: string): Promise<PostedCounts> {
    const response = await this.get(`/internal/evidence/posted-counts?since=${encodeURIComponent(since)}`);
    return postedCountsSchema.parse(await response.json());
  }

  private async get(path: string): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), { headers: { [SERVICE_TOKEN_HEADER]: await this.token.get() } });
    } catch {
      throw unavailable();
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw unavailable();
    }
    return response;
  }
}
