import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { afterAll, describe, it } from 'vitest';
import { MongoBlobIntents, connectMongo, infrastructureFromEnv, serialWritesOf } from '@portal/platform';
import { blobIntentsContract } from '@portal/platform/testing';
import { MongoUserRepository } from '../../services/identity/src/repositories/mongo/mongo-user-repository.js';
import { MongoAuthorDirectory, MongoEvidenceRepository } from '../../services/evidence/src/repositories/mongo/mongo-evidence-repository.js';
import { userRepositoryContract } from '../../services/identity/test/contracts/identity-store-contracts.js';
import { auditLogContract } from '../../services/identity/test/contracts/audit-log-contracts.js';
import { MongoAuditLog } from '../../services/identity/src/repositories/mongo/mongo-audit-log.js';
import { MongoScheduleStore } from '../../services/identity/src/repositories/mongo/mongo-schedule-store.js';
import { scheduleStoreContract } from '../../services/identity/test/contracts/schedule-store-contracts.js';
import { MongoAppointmentStore } from '../../services/identity/src/repositories/mongo/mongo-appointment-store.js';
import { appointmentStoreContract } from '../../services/identity/test/contracts/appointment-store-contracts.js';
import { authorDirectoryContract, evidenceRepositoryContract } from '../../services/evidence/test/contracts/evidence-store-contracts.js';
import { infraServers, stopContainers } from '../support/infra-servers.js';

const servers = await infraServers();
// MONGO_SERIAL_WRITES as a service reads it (auto by default: on for FerretDB, off for servers
// that need no queue); the suites' names say which way they ran.
const serialWrites = infrastructureFromEnv().mongoSerialWrites ?? 'auto';
const connections: Connection[] = [];
afterAll(async () => {
  for (const connection of connections) await connection.close();
  await stopContainers();
});

/** A fresh database per suite, as each service has its own. */
async function database(service: string): Promise<Connection> {
  const connection = await connectMongo(servers.mongoUrl!, `contract_${service}_${randomUUID().slice(0, 8)}`, { serialWrites });
  connections.push(connection);
  return connection;
}

if (servers.mongoUrl) {
  const decided = serialWritesOf(await database('probe'));
  const name = `MongoDB (mongoose, serial writes ${decided.on ? 'on' : 'off'})`;
  const identityDb = database('identity').then(async (connection) => {
    const users = new MongoUserRepository(connection);
    await users.ensureIndexes();
    return users;
  });
  userRepositoryContract(name, () => identityDb);
  const auditDb = database('audit').then(async (connection) => {
    const audit = new MongoAuditLog(connection);
    await audit.ensureIndexes();
    return audit;
  });
  auditLogContract(name, () => auditDb);
  scheduleStoreContract(name, async () => new MongoScheduleStore(await auditDb.then(() => database('schedule'))));
  blobIntentsContract(`identity ${name}`, { create: async () => (await identityDb).blobIntents });
  const appointmentsDb = database('appointments').then(async (connection) => {
    const appointments = new MongoAppointmentStore(connection);
    await appointments.ensureIndexes();
    return appointments;
  });
  appointmentStoreContract(name, () => appointmentsDb);
  const evidenceDb = database('evidence').then(async (connection) => {
    const evidence = new MongoEvidenceRepository(connection);
    await evidence.ensureIndexes();
    return { evidence, authors: new MongoAuthorDirectory(connection) };
  });
  evidenceRepositoryContract(name, async () => (await evidenceDb).evidence);
  authorDirectoryContract(name, async () => (await evidenceDb).authors);
  blobIntentsContract(`evidence ${name}`, { create: async () => (await evidenceDb).evidence.blobIntents });
  // The adapter on its own, in a database of its own (indexes built as a service's start does).
  const intentsDb = database('intents').then(async (connection) => {
    const intents = new MongoBlobIntents(connection);
    await intents.ensureIndexes();
    return intents;
  });
  blobIntentsContract(name, { create: () => intentsDb });
} else {
  describe.skip('Repository contracts: MongoDB — no server (MONGO_URL unset and no Docker)', () => it('skipped', () => undefined));
}
