#!/usr/bin/env node
// Backup and restore of a distributed deployment's state: the MongoDB databases of one
// deployment namespace (<namespace>_identity, <namespace>_evidence) and its objects in S3 (keys
// under "<namespace>/"). Redis (sessions, jobs) and Kafka (events) hold nothing a restore needs:
// see docs/OPERATIONS.md.
//
//   node infra/backup/portal-backup.mjs backup  --namespace portal --out /backups/2026-11-24
//   node infra/backup/portal-backup.mjs restore --from /backups/2026-11-24 --namespace portal-restored
//   node infra/backup/portal-backup.mjs verify  --from /backups/2026-11-24 --namespace portal-restored
//   node infra/backup/portal-backup.mjs prune   --root /backups --keep 14
//
// Objects are copied PARALLEL (--parallel, default 8) at a time, each streamed between S3 and its
// file, never held whole in memory. prune keeps the newest `keep` finished backups under a folder
// (and removes unfinished ones older than the newest finished one): the retention rule of the
// CronJob in k8s/components/backup-cronjob.
//
// The servers come from the services' own variables: MONGO_URL, S3_BUCKET, S3_ENDPOINT,
// S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE (and S3_PREFIX when the
// services use one instead of the namespace). Run it from the repository after `npm ci`.
//
// The backup folder: manifest.json (what was copied, with counts), mongo/<database>/<collection>
// .ndjson (one document a line, MongoDB Extended JSON, so dates and binary data survive) with
// <collection>.indexes.json, and s3/<key> for every object with s3-objects.ndjson (key, size,
// content type). MongoDB is copied before S3, so every object a copied document points at was
// already stored when S3 is copied. restore refuses a namespace that already holds data.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

const { MongoClient, BSON } = mongoose.mongo;
const SERVICES = ['identity', 'evidence'];
/** Objects copied at once by default: enough to fill a link to S3, few enough for its limits. */
export const DEFAULT_PARALLEL = 8;

/**
 * Runs `work` on every item of an (async) iterable, at most `limit` at a time, in no particular
 * order; the first failure stops taking new items and is thrown once the running ones settle.
 */
export async function eachBounded(items, limit, work) {
  const iterator = items[Symbol.asyncIterator] ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failure;
  const lane = async () => {
    while (failure === undefined) {
      const next = await iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, lane));
  if (failure) throw failure.error;
}

/** @param {NodeJS.ProcessEnv} env */
export function serversFromEnv(env = process.env) {
  if (!env.MONGO_URL) throw new Error('MONGO_URL is not set');
  if (!env.S3_BUCKET) throw new Error('S3_BUCKET is not set');
  return {
    mongoUrl: env.MONGO_URL,
    s3: {
      bucket: env.S3_BUCKET,
      region: env.S3_REGION ?? 'us-east-1',
      endpoint: env.S3_ENDPOINT || undefined,
      forcePathStyle: env.S3_FORCE_PATH_STYLE !== 'false',
      accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
      prefix: env.S3_PREFIX || undefined,
    },
  };
}

function s3Client(s3) {
  return new S3Client({
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.accessKeyId && s3.secretAccessKey ? { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } } : {}),
  });
}

/** The services' key prefix: S3_PREFIX when set, else the namespace (as createBlobStore does). */
function keyPrefix(s3, namespace) {
  return `${(s3.prefix ?? namespace).replace(/\/+$/, '')}/`;
}

async function* objectsUnder(client, bucket, prefix) {
  let token;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) yield object;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

async function* linesOf(file) {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim()) yield line;
}

/**
 * Copies the namespace's databases and objects into a new folder `out`.
 * @returns {Promise<object>} the manifest
 */
export async function backup({ mongoUrl, s3, namespace, out, parallel = DEFAULT_PARALLEL, log = () => {} }) {
  await mkdir(out, { recursive: true });
  if ((await readdir(out)).length > 0) throw new Error(`${out} is not empty: back up into a new folder`);
  const manifest = {
    format: 1,
    namespace,
    startedAt: new Date().toISOString(),
    databases: {},
    s3: { bucket: s3.bucket, prefix: keyPrefix(s3, namespace), objects: 0, bytes: 0 },
  };
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    for (const service of SERVICES) {
      const name = `${namespace}_${service}`;
      const db = mongo.db(name);
      manifest.databases[service] = {};
      const folder = join(out, 'mongo', service);
      await mkdir(folder, { recursive: true });
      for (const { name: collection } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        if (collection.startsWith('system.')) continue;
        let count = 0;
        const file = createWriteStream(join(folder, `${collection}.ndjson`));
        for await (const document of db.collection(collection).find({})) {
          if (!file.write(`${BSON.EJSON.stringify(document, { relaxed: false })}\n`))
            await new Promise((resolve) => file.once('drain', resolve));
          count += 1;
        }
        await new Promise((resolve, reject) => file.end((error) => (error ? reject(error) : resolve())));
        const indexes = (await db.collection(collection).indexes()).filter((index) => index.name !== '_id_');
        await writeFile(join(folder, `${collection}.indexes.json`), JSON.stringify(indexes, null, 2));
        manifest.databases[service][collection] = count;
        log(`mongo ${name}.${collection}: ${count} documents`);
      }
    }
  } finally {
    await mongo.close();
  }
  const client = s3Client(s3);
  try {
    const index = createWriteStream(join(out, 's3-objects.ndjson'));
    await eachBounded(objectsUnder(client, s3.bucket, manifest.s3.prefix), parallel, async (object) => {
      const key = object.Key.slice(manifest.s3.prefix.length);
      const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: object.Key }));
      const target = join(out, 's3', key);
      await mkdir(dirname(target), { recursive: true });
      await pipeline(got.Body, createWriteStream(target));
      index.write(`${JSON.stringify({ key, size: object.Size ?? 0, contentType: got.ContentType ?? 'application/octet-stream' })}\n`);
      manifest.s3.objects += 1;
      manifest.s3.bytes += object.Size ?? 0;
    });
    await new Promise((resolve, reject) => index.end((error) => (error ? reject(error) : resolve())));
    log(`s3 ${s3.bucket}/${manifest.s3.prefix}: ${manifest.s3.objects} objects, ${manifest.s3.bytes} bytes`);
  } finally {
    client.destroy();
  }
  manifest.finishedAt = new Date().toISOString();
  await writeFile(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

/** Loads a backup folder into `namespace`, which must be empty (databases and key prefix). */
export async function restore({ mongoUrl, s3, namespace, from, parallel = DEFAULT_PARALLEL, log = () => {} }) {
  const manifest = JSON.parse(await readFile(join(from, 'manifest.json'), 'utf8'));
  const prefix = keyPrefix(s3, namespace);
  const client = s3Client(s3);
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    for (const service of Object.keys(manifest.databases)) {
      const existing = await mongo.db(`${namespace}_${service}`).listCollections({}, { nameOnly: true }).toArray();
      if (existing.some((collection) => !collection.name.startsWith('system.'))) {
        throw new Error(`the database ${namespace}_${service} already holds collections: restore into a new namespace, or drop it first`);
      }
    }
    for await (const _ of objectsUnder(client, s3.bucket, prefix)) {
      throw new Error(`s3://${s3.bucket}/${prefix} already holds objects: restore into a new namespace, or empty it first`);
    }
    for (const [service, collections] of Object.entries(manifest.databases)) {
      const db = mongo.db(`${namespace}_${service}`);
      for (const collection of Object.keys(collections)) {
        const target = db.collection(collection);
        await db.createCollection(collection);
        let batch = [];
        let count = 0;
        for await (const line of linesOf(join(from, 'mongo', service, `${collection}.ndjson`))) {
          batch.push(BSON.EJSON.parse(line, { relaxed: false }));
          if (batch.length === 500) {
            await target.insertMany(batch, { ordered: true });
            count += batch.length;
            batch = [];
          }
        }
        if (batch.length) await target.insertMany(batch, { ordered: true });
        count += batch.length;
        const indexes = JSON.parse(await readFile(join(from, 'mongo', service, `${collection}.indexes.json`), 'utf8'));
        for (const { key, name, v: _v, ns: _ns, ...options } of indexes) await target.createIndex(key, { name, ...options });
        log(`mongo ${namespace}_${service}.${collection}: ${count} documents, ${indexes.length} indexes`);
      }
    }
    let objects = 0;
    await eachBounded(linesOf(join(from, 's3-objects.ndjson')), parallel, async (line) => {
      const { key, contentType } = JSON.parse(line);
      // Streamed from the file (its length told to S3 up front), never read whole into memory.
      const file = join(from, 's3', key);
      const { size } = await stat(file);
      await client.send(
        new PutObjectCommand({
          Bucket: s3.bucket,
          Key: prefix + key,
          Body: createReadStream(file),
          ContentLength: size,
          ContentType: contentType,
        }),
      );
      objects += 1;
    });
    log(`s3 ${s3.bucket}/${prefix}: ${objects} objects`);
    return { databases: manifest.databases, objects };
  } finally {
    await mongo.close();
    client.destroy();
  }
}

/** Compares a namespace with a backup: the same documents (by _id) and the same objects and sizes. */
export async function verify({ mongoUrl, s3, namespace, from }) {
  const manifest = JSON.parse(await readFile(join(from, 'manifest.json'), 'utf8'));
  const problems = [];
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    for (const [service, collections] of Object.entries(manifest.databases)) {
      const db = mongo.db(`${namespace}_${service}`);
      for (const collection of Object.keys(collections)) {
        for await (const line of linesOf(join(from, 'mongo', service, `${collection}.ndjson`))) {
          const document = BSON.EJSON.parse(line, { relaxed: false });
          const found = await db.collection(collection).findOne({ _id: document._id });
          if (!found) problems.push(`${service}.${collection}: ${BSON.EJSON.stringify(document._id)} is missing`);
          else if (BSON.EJSON.stringify(found, { relaxed: false }) !== BSON.EJSON.stringify(document, { relaxed: false })) {
            problems.push(`${service}.${collection}: ${BSON.EJSON.stringify(document._id)} differs`);
          }
        }
      }
    }
  } finally {
    await mongo.close();
  }
  const client = s3Client(s3);
  try {
    const prefix = keyPrefix(s3, namespace);
    const sizes = new Map();
    for await (const object of objectsUnder(client, s3.bucket, prefix)) sizes.set(object.Key.slice(prefix.length), object.Size ?? 0);
    for await (const line of linesOf(join(from, 's3-objects.ndjson'))) {
      const { key, size } = JSON.parse(line);
      if (!sizes.has(key)) problems.push(`s3: ${key} is missing`);
      else if (sizes.get(key) !== size) problems.push(`s3: ${key} has ${sizes.get(key)} bytes, the backup ${size}`);
    }
  } finally {
    client.destroy();
  }
  return problems;
}

/**
 * The retention rule: under `root`, keeps the `keep` newest finished backups (folders whose
 * manifest.json has finishedAt; names sort by time, as the CronJob names them) and removes the
 * older ones, and every unfinished folder older than the newest finished one (a run that failed).
 * Returns the names removed.
 */
export async function prune({ root, keep, log = () => {} }) {
  if (!Number.isInteger(keep) || keep < 1) throw new Error('--keep must be a whole number of at least 1');
  const folders = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const manifest = await readFile(join(root, entry.name, 'manifest.json'), 'utf8').then(JSON.parse, () => null);
    folders.push({ name: entry.name, finished: Boolean(manifest?.finishedAt) });
  }
  folders.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)); // newest first
  const newestFinished = folders.findIndex((folder) => folder.finished);
  const removed = [];
  let kept = 0;
  for (const [at, folder] of folders.entries()) {
    const stale = folder.finished ? ++kept > keep : newestFinished >= 0 && at > newestFinished;
    if (!stale) continue;
    await rm(join(root, folder.name), { recursive: true, force: true });
    removed.push(folder.name);
    log(`removed ${folder.name}${folder.finished ? '' : ' (unfinished)'}`);
  }
  return removed;
}

function option(args, name) {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? args[at + 1] : undefined;
  if (!value) throw new Error(`--${name} is required`);
  return value;
}

function parallelOption(args) {
  if (!args.includes('--parallel')) return DEFAULT_PARALLEL;
  const value = Number(option(args, 'parallel'));
  if (!Number.isInteger(value) || value < 1) throw new Error('--parallel must be a whole number of at least 1');
  return value;
}

async function main(args) {
  const [command] = args;
  const log = (line) => console.log(line);
  if (command === 'prune') {
    const removed = await prune({ root: option(args, 'root'), keep: Number(option(args, 'keep')), log });
    console.log(`${removed.length} old backups removed`);
    return;
  }
  const servers = serversFromEnv();
  if (command === 'backup') {
    const manifest = await backup({
      ...servers,
      namespace: option(args, 'namespace'),
      out: option(args, 'out'),
      parallel: parallelOption(args),
      log,
    });
    console.log(`backup of ${manifest.namespace} written (${manifest.s3.objects} objects)`);
  } else if (command === 'restore') {
    await restore({ ...servers, namespace: option(args, 'namespace'), from: option(args, 'from'), parallel: parallelOption(args), log });
    console.log('restored');
  } else if (command === 'verify') {
    const problems = await verify({ ...servers, namespace: option(args, 'namespace'), from: option(args, 'from') });
    for (const problem of problems) console.log(problem);
    console.log(problems.length ? `${problems.length} differences` : 'every document and object of the backup is there');
    if (problems.length) process.exitCode = 1;
  } else {
    console.error(
      'usage: portal-backup.mjs backup --namespace NS --out DIR [--parallel N] | restore --from DIR --namespace NS [--parallel N] | verify --from DIR --namespace NS | prune --root DIR --keep N',
    );
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
