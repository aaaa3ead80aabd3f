/**
 * Updates of one collection from this process, one at a time.
 *
 * MongoDB applies a single-document update atomically, and the transactional outbox relies on
 * that: the relay takes published events out of an aggregate's `_outbox` while requests change
 * the same document. FerretDB v1 (the MongoDB-wire server the CI starts) does not: it reads the
 * matching documents, applies the update in its own process and writes whole documents back, so
 * two updates of one document that overlap can lose one of them (seen: a participant's
 * `video_watched` reverted by the relay's concurrent clean-up of the registration event). Updates
 * that go through here never overlap within a process, which closes that gap for one replica of
 * a service; several replicas against FerretDB could still overlap, which is one reason the
 * operations guide asks for real MongoDB in production. Inserts need no queue (a new document
 * has no concurrent writer) and reads never wait.
 */
const queues = new WeakMap<object, Promise<unknown>>();

export function serialWrite<T>(collection: object, write: () => Promise<T>): Promise<T> {
  const previous = queues.get(collection) ?? Promise.resolve();
  const run = previous.then(write);
  queues.set(collection, run.catch(() => undefined));
  return run;
}
