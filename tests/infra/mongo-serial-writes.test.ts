import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { connectMongo, createEvent, serialWritesOf, type SerialWritesSetting } from '@portal/platform';
import { MongoEvidenceRepository } from '../../services/evidence/src/repositories/mongo/mongo-evidence-repository.js';
import { sampleEvidence } from '../../services/evidence/test/contracts/evidence-store-contracts.js';
import { searchWords } from '../../services/evidence/src/domain/search-words.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

/**
 * MONGO_SERIAL_WRITES against the MongoDB-wire server of the environment (FerretDB in CI): the
 * queue is on exactly where the server loses concurrent updates, with it on nothing is lost and
 * updates of a collection never overlap, with it off they do, and on a server that needs no queue
 * the evidence adapter stays correct without it.
 */
const servers = await infraServers();
const connections: Connection[] = [];
afterAll(async () => {
  for (const connection of connections) await connection.close();
  await stopContainers();
});

const N = 30;
const event = (key: string, type = 'evidence.updated') => ({
  topic: 'evidence.items',
  event: createEvent({ type, key, data: { evidenceId: key } }),
});

/** An evidence repository in a fresh database, and the most update commands on `evidence` it had in flight at once. */
async function evidenceStore(serialWrites: SerialWritesSetting) {
  const connection = await connectMongo(servers.mongoUrl!, `serial_${serialWrites}_${randomUUID().slice(0, 8)}`, {
    serialWrites,
    driver: { monitorCommands: true },
  });
  connections.push(connection);
  const inFlight = new Set<number>();
  let most = 0;
  const client = connection.getClient();
  client.on('commandStarted', (started) => {
    const command = started.commandName;
    if ((command === 'update' || command === 'findAndModify') && started.command[command] === 'evidence') {
      inFlight.add(started.requestId);
      most = Math.max(most, inFlight.size);
    }
  });
  client.on('commandSucceeded', (done) => inFlight.delete(done.requestId));
  client.on('commandFailed', (done) => inFlight.delete(done.requestId));
  const repository = new MongoEvidenceRepository(connection);
  await repository.ensureIndexes();
  return {
    repository,
    connection,
    /** The most updates in flight at once since the last call. */
    mostAtOnce: () => {
      const answer = most;
      most = inFlight.size;
      return answer;
    },
  };
}

/**
 * N updates of one item at once, each with its event, while the relay publishes the item's
 * creation event and a media result lands: how many update events and results were lost.
 */
async function concurrentUpdates(
  repository: MongoEvidenceRepository,
): Promise<{ lostEvents: number; mediaResultLost: boolean; location: string | null }> {
  const item = sampleEvidence({ media_type: 2, media_status: 'processing', media_revision: 1 });
  const created = event(item.id, 'evidence.created');
  await repository.create(item, [created]);
  await Promise.all([
    ...Array.from({ length: N }, (_, i) => repository.update(item.id, { location: `spot ${i}` }, [event(item.id)])),
    repository.outbox.markPublished([created.event.id]),
    repository.applyMediaResult(item.id, 1, { media_status: 'ready', width: 640, height: 480 }),
  ]);
  const pending = (await repository.outbox.pending(10_000)).filter((entry) => entry.event.key === item.id);
  const after = await repository.findById(item.id);
  return {
    lostEvents: N - pending.filter((entry) => entry.event.type === 'evidence.updated').length,
    mediaResultLost: after?.media_status !== 'ready' || after.width !== 640,
    location: after?.location ?? null,
  };
}

if (servers.mongoUrl) {
  const probe = await evidenceStore('auto');
  const needsQueue = serialWritesOf(probe.connection).on;

  describe(`MONGO_SERIAL_WRITES against this server (auto: ${serialWritesOf(probe.connection).reason})`, () => {
    it('auto turns the queue on exactly where concurrent updates of one document get lost', async () => {
      // Straight through the driver, no queue: 50 increments of one field at once.
      const counters = probe.connection.collection<{ _id: string; n: number }>('counters');
      await counters.insertOne({ _id: 'one', n: 0 });
      await Promise.all(Array.from({ length: 50 }, () => counters.updateOne({ _id: 'one' }, { $inc: { n: 1 } })));
      const lost = 50 - (await counters.findOne({ _id: 'one' }))!.n;
      expect({ queued: needsQueue, lostUpdates: lost > 0 }).toEqual({ queued: lost > 0, lostUpdates: lost > 0 });
    });

    it('on: concurrent updates of one item, the relay and a media result lose nothing, and run one at a time', async () => {
      const { repository, mostAtOnce } = await evidenceStore('on');
      mostAtOnce();
      const outcome = await concurrentUpdates(repository);
      const most = mostAtOnce();
      expect(outcome).toMatchObject({ lostEvents: 0, mediaResultLost: false, location: expect.stringMatching(/^spot \d+$/) });
      expect(most).toBe(1);
    });

    it('off: the same updates are in flight together (the queue is really off)', async () => {
      const { repository, mostAtOnce } = await evidenceStore('off');
      mostAtOnce();
      const outcome = await concurrentUpdates(repository);
      expect(mostAtOnce()).toBeGreaterThan(1);
      // Only a server that needs no queue keeps them all; FerretDB's losses are why it has one.
      if (!needsQueue) expect(outcome).toMatchObject({ lostEvents: 0, mediaResultLost: false });
    });

    it.skipIf(needsQueue)(
      'off, on a server that needs no queue: concurrent changes of title and of notes keep the search words true',
      async () => {
        const { repository, connection } = await evidenceStore('off');
        const items = Array.from({ length: 5 }, () => sampleEvidence({ title: 'lantern', notes: 'harbour' }));
        for (const item of items) await repository.create(item, []);
        await Promise.all(
          items.flatMap((item) =>
            Array.from({ length: 6 }, (_, i) =>
              i % 2
                ? repository.update(item.id, { title: `lantern${i} beacon${i}` }, [])
                : repository.update(item.id, { notes: `harbour${i} quay${i}` }, []),
            ),
          ),
        );
        for (const item of items) {
          const stored = await connection
            .collection<{ _id: string; title: string; notes: string; search_terms: string[] }>('evidence')
            .findOne({ _id: item.id });
          expect([...stored!.search_terms].sort()).toEqual([...searchWords(`${stored!.title} ${stored!.notes}`)].sort());
        }
      },
    );

    it.skipIf(needsQueue)(
      'off, on a server that needs no queue: one item published by several at once is changed once, never reported missing',
      async () => {
        const { repository } = await evidenceStore('off');
        const item = sampleEvidence();
        await repository.create(item, []);
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => repository.setVisibility([item.id], true, (record) => [event(record.id, 'evidence.published')])),
        );
        expect(answers.flatMap((answer) => answer.missing)).toEqual([]);
        expect(answers.flatMap((answer) => answer.changed)).toHaveLength(1);
        expect(answers.flatMap((answer) => answer.unchanged)).toHaveLength(7);
        const published = (await repository.outbox.pending(10_000)).filter((entry) => entry.event.key === item.id);
        expect(published).toHaveLength(1);
      },
    );
  });
} else {
  describe.skip('MONGO_SERIAL_WRITES — no server (MONGO_URL unset and no Docker)', () => it('skipped', () => undefined));
}
