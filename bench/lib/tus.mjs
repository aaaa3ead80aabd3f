// Resumable uploads the way the web app sends them: tus-js-client (the web app's own dependency,
// resolved from web/ so that the benches use the very same client) in the web app's chunks
// (uploadChunkSize of @portal/contracts, from its build: 5 MiB, larger for a large file).
import { createReadStream, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './runner.mjs';

const { Upload } = createRequire(join(ROOT, 'web', 'package.json'))('tus-js-client');
const { uploadChunkSize } = await import(pathToFileURL(join(ROOT, 'packages/contracts/dist/index.js')).href);

/** The chunk size the web app uses for a file of this many bytes (web/src/evidence/upload.ts). */
export const webChunkSize = uploadChunkSize;

/**
 * One upload, without retries (a failure is reported, not hidden). input: a file path or a
 * Buffer. Answers the time it took, the final answer's status and body, per chunk the time
 * (ms since the start) its PATCH was answered, and per request its method and how long it took
 * from sending to the answer (ms). Rejects with { status, body, message } on failure.
 */
export function tusUpload({
  endpoint,
  input,
  headers = {},
  metadata = {},
  chunkSize = webChunkSize(typeof input === 'string' ? statSync(input).size : input.length),
}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks = [];
    const requests = [];
    const sentAt = new WeakMap();
    let upload = null;
    upload = new Upload(typeof input === 'string' ? createReadStream(input) : input, {
      endpoint,
      headers,
      metadata,
      chunkSize,
      retryDelays: null,
      storeFingerprintForResuming: false,
      onChunkComplete: (_size, accepted) => chunks.push([performance.now() - started, accepted]),
      onBeforeRequest: (request) => {
        sentAt.set(request, performance.now());
      },
      onAfterResponse: (request) => {
        requests.push({ method: request.getMethod(), ms: performance.now() - (sentAt.get(request) ?? started) });
      },
      onSuccess: ({ lastResponse }) =>
        resolve({
          ms: performance.now() - started,
          status: lastResponse.getStatus(),
          body: lastResponse.getBody(),
          evidenceId: lastResponse.getHeader('X-Evidence-Id') ?? null,
          url: upload.url,
          chunks,
          requests,
        }),
      onError: (error) => {
        const response = error.originalResponse ?? null;
        reject(
          Object.assign(new Error(error.message), {
            status: response ? response.getStatus() : 0,
            body: response ? response.getBody() : null,
            ms: performance.now() - started,
          }),
        );
      },
    });
    upload.start();
  });
}
