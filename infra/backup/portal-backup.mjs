#!/usr/bin/env node
// Backup and restore of a distributed deployment's state: the MongoDB databases of one
// deployment namespace (<namespace>_identity, <namespace>_evidence) and its objects in S3 (keys
// under "<namespace>/"). Redis (sessions, jobs) and Kafka (events) hold nothing a restore needs:
// see docs/OPERATIONS.md.
//
//   node infra/backup/portal-backup.mjs backup  --namespace portal --out /backups/2026-11-24
//   node infra/backup/portal-backup.mjs backup  --namespace portal --root /backups --keep 14 [--objects list] [--reserve 1Gi]
//   node infra/backup/portal-backup.mjs restore --from /backups/2026-11-24 --namespace portal-restored
//   node infra/backup/portal-backup.mjs verify  --from /backups/2026-11-24 --namespace portal-restored
//   node infra/backup/portal-backup.mjs prune   --root /backups --keep 14
//
// Objects are copied PARALLEL (--parallel, default 8) at a time, each streamed between S3 and its
// file, never held whole in memory; with --objects list they are not copied but listed (key, size,
// ETag), for a bucket that keeps them itself (versioning and replication, docs/OPERATIONS.md), and
// a restore copies them inside the bucket. prune keeps the newest `keep` finished backups under a
// folder and removes failed runs: the retention rule of the CronJob in
// k8s/components/backup-cronjob. backup --root applies it BEFORE copying (the newest keep - 1
// stay, so the new one makes keep), then checks that the copy fits: its size is estimated from
// MongoDB's statistics and the bucket's listing, and the volume must keep --reserve free after it.
// A backup that does not fit, or fills the disk on the way, stops with "not enough space", removes
// what it wrote and exits with code 3 (the CronJob fails at once instead of retrying).
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
import { mkdir, readFile, readdir, rm, stat, statfs, utimes, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import mongoose from 'mongoose';
import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

const { MongoClient, BSON } = mongoose.mongo;
const SERVICES = ['identity', 'evidence'];
/** Objects copied at once by default: enough to fill a link to S3, few enough for its limits. */
export const DEFAULT_PARALLEL = 8;
/** The exit code of a backup that does not fit on its volume (the CronJob's podFailurePolicy fails the Job at once on it). */
export const NO_SPACE_EXIT_CODE = 3;
/** A running backup touches this file in its folder; prune takes an unfinished folder untouched for STALE_MS for a dead run. */
const IN_PROGRESS = '.in-progress';
const HEARTBEAT_MS = 30_000;
export const STALE_MS = 10 * 60_000;
/**
 * MongoDB's statistics count documents as BSON; the backup writes them as canonical Extended JSON,
 * which spells out every type ({"$numberInt": "1"}): up to about three times as large.
 */
const EJSON_PER_BSON_BYTE = 3;

/** A backup that does not fit on its volume: exit code NO_SPACE_EXIT_CODE. */
export class NoSpaceError extends Error {
  name = 'NoSpaceError';
}

const GB = (bytes) => `${(bytes / 1e9).toFixed(bytes < 1e10 ? 2 : 1)} GB`;

/** A size with an optional unit, as Kubernetes writes them: 512Mi, 2Gi, 1G, 1500000 (bytes). */
export function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(Ki|Mi|Gi|Ti|K|M|G|T)?B?$/.exec(String(text).trim());
  if (!match) throw new Error(`${text} is not a size (bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T)`);
  const units = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Math.round(Number(match[1]) * (match[2] ? units[match[2]] : 1));
}

/** Bytes an unprivileged writer may still use on the file system that holds `dir`. */
export async function freeBytes(dir) {
  const fs = await statfs(dir);
  return fs.bavail * fs.bsize;
}

/**
 * Refuses (NoSpaceError) when `needed` bytes written into `dir` would leave less than `reserve`
 * free on its file system: read from the file system itself (statfs), as the copy would find it.
 */
export async function checkFreeSpace({ dir, needed, reserve = 0, what = 'this backup' }) {
  const free = await freeBytes(dir);
  if (free - needed < reserve) {
    throw new NoSpaceError(
      `not enough space in ${dir}: ${what} needs about ${GB(needed)}${reserve ? ` and ${GB(reserve)} must stay free` : ''}, ` +
        `but ${GB(free)} are free. Keep fewer backups (--keep, BACKUP_KEEP), list the objects instead of copying them ` +
        `(--objects list, with bucket versioning and replication), or give the volume more space.`,
    );
  }
  return { free, needed };
}

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

/** The databases of a namespace, and their collections but MongoDB's own. */
async function collectionsOf(mongo, namespace) {
  const databases = [];
  for (const service of SERVICES) {
    const db = mongo.db(`${namespace}_${service}`);
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((n) => !n.startsWith('system.'));
    databases.push({ service, db, names });
  }
  return databases;
}

/**
 * What a backup of the namespace will write, in bytes: the documents (MongoDB's own statistics,
 * times what Extended JSON adds) and, when objects are copied, their sizes from the bucket's
 * listing (a listing line each when they are only listed). Objects stored while the backup runs
 * add to it: the reserve is for them.
 */
export async function estimateBackup({ mongoUrl, s3, namespace, objects = 'copy' }) {
  const mongo = await MongoClient.connect(mongoUrl);
  let mongoBytes = 0;
  try {
    for (const { db, names } of await collectionsOf(mongo, namespace)) {
      if (names.length) mongoBytes += ((await db.stats()).dataSize ?? 0) * EJSON_PER_BSON_BYTE;
    }
  } finally {
    await mongo.close();
  }
  const client = s3Client(s3);
  let count = 0;
  let bytes = 0;
  try {
    for await (const object of objectsUnder(client, s3.bucket, keyPrefix(s3, namespace))) {
      count += 1;
      bytes += object.Size ?? 0;
    }
  } finally {
    client.destroy();
  }
  const objectBytes = objects === 'copy' ? bytes : count * 300;
  return { mongoBytes, objectBytes, objects: count, bucketBytes: bytes, total: mongoBytes + objectBytes + 1e6 };
}

/** A new backup's folder name: its UTC start time (the names sort by time, as prune needs). */
export function backupName(date = new Date()) {
  return date
    .toISOString()
    .replace(/:/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * Copies the namespace's databases and objects into a new folder: `out`, or (with `root`) a new
 * folder under `root` named by the start time, after the retention rule has made room for it
 * (the newest `keep` - 1 finished backups stay, failed runs go). It first checks that the copy
 * fits, leaving `reserve` bytes free; one that does not fit, or fills the disk on the way, throws
 * NoSpaceError, and a backup that fails removes what it wrote.
 * `objects`: 'copy' (every object's bytes) or 'list' (their keys, sizes and ETags only).
 * `log` may answer a promise: the backup waits for it.
 * @returns {Promise<object>} the manifest (with `folder`, where it was written)
 */
export async function backup({
  mongoUrl,
  s3,
  namespace,
  out,
  root,
  keep,
  objects = 'copy',
  reserve = 0,
  parallel = DEFAULT_PARALLEL,
  log = () => {},
}) {
  if (objects !== 'copy' && objects !== 'list') throw new Error('--objects must be copy or list');
  if (root !== undefined) {
    if (!Number.isInteger(keep) || keep < 2)
      throw new Error('--keep must be a whole number of at least 2 (the newest backup stays while the next is made)');
    await mkdir(root, { recursive: true });
    await prune({ root, keep: keep - 1, log });
    out = join(root, backupName());
  }
  const estimate = await estimateBackup({ mongoUrl, s3, namespace, objects });
  const target = root ?? dirname(out);
  await mkdir(target, { recursive: true });
  await checkFreeSpace({
    dir: target,
    needed: estimate.total,
    reserve,
    what: `the backup of ${namespace} (MongoDB ${GB(estimate.mongoBytes)}, ${estimate.objects} objects ${objects === 'copy' ? GB(estimate.objectBytes) : 'listed'})`,
  });
  await log(`space: about ${GB(estimate.total)} needed, ${GB(await freeBytes(target))} free`);
  await mkdir(out, { recursive: true });
  if ((await readdir(out)).length > 0) throw new Error(`${out} is not empty: back up into a new folder`);
  await writeFile(join(out, IN_PROGRESS), '');
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(join(out, IN_PROGRESS), now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    const manifest = await copyInto({ mongoUrl, s3, namespace, out, objects, parallel, log });
    await rm(join(out, IN_PROGRESS), { force: true });
    return { ...manifest, folder: out };
  } catch (error) {
    // A failed run frees its space at once, whatever stopped it.
    await rm(out, { recursive: true, force: true });
    if (error?.code === 'ENOSPC') {
      throw new NoSpaceError(
        `not enough space in ${target}: the disk filled up during the backup of ${namespace} (objects stored meanwhile?); what it wrote is removed. Raise --reserve or give the volume more space.`,
      );
    }
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

async function copyInto({ mongoUrl, s3, namespace, out, objects, parallel, log }) {
  const manifest = {
    format: 1,
    namespace,
    startedAt: new Date().toISOString(),
    databases: {},
    s3: { bucket: s3.bucket, prefix: keyPrefix(s3, namespace), objects: 0, bytes: 0, copied: objects === 'copy' },
  };
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    for (const { service, db, names } of await collectionsOf(mongo, namespace)) {
      manifest.databases[service] = {};
      const folder = join(out, 'mongo', service);
      await mkdir(folder, { recursive: true });
      for (const collection of names) {
        let count = 0;
        const file = createWriteStream(join(folder, `${collection}.ndjson`));
        const written = new Promise((resolve, reject) => file.on('error', reject).on('finish', resolve));
        try {
          for await (const document of db.collection(collection).find({})) {
            if (!file.write(`${BSON.EJSON.stringify(document, { relaxed: false })}\n`))
              await Promise.race([new Promise((resolve) => file.once('drain', resolve)), written]);
            count += 1;
          }
          file.end();
          await written;
        } finally {
          file.destroy(); // closes the file on a failure too (a full disk: nothing may stay open)
        }
        const indexes = (await db.collection(collection).indexes()).filter((index) => index.name !== '_id_');
        await writeFile(join(folder, `${collection}.indexes.json`), JSON.stringify(indexes, null, 2));
        manifest.databases[service][collection] = count;
        await log(`mongo ${db.databaseName}.${collection}: ${count} documents`);
      }
    }
  } finally {
    await mongo.close();
  }
  const client = s3Client(s3);
  const index = createWriteStream(join(out, 's3-objects.ndjson'));
  try {
    const indexed = new Promise((resolve, reject) => index.on('error', reject).on('finish', resolve));
    await eachBounded(objectsUnder(client, s3.bucket, manifest.s3.prefix), objects === 'copy' ? parallel : 1, async (object) => {
      const key = object.Key.slice(manifest.s3.prefix.length);
      if (objects === 'copy') {
        const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: object.Key }));
        const target = join(out, 's3', key);
        await mkdir(dirname(target), { recursive: true });
        await pipeline(got.Body, createWriteStream(target));
        index.write(`${JSON.stringify({ key, size: object.Size ?? 0, contentType: got.ContentType ?? 'application/octet-stream' })}\n`);
      } else {
        index.write(`${JSON.stringify({ key, size: object.Size ?? 0, etag: object.ETag ?? null })}\n`);
      }
      manifest.s3.objects += 1;
      manifest.s3.bytes += object.Size ?? 0;
    });
    index.end();
    await indexed;
    await log(
      `s3 ${s3.bucket}/${manifest.s3.prefix}: ${manifest.s3.objects} objects, ${manifest.s3.bytes} bytes ${objects === 'copy' ? 'copied' : 'listed'}`,
    );
  } finally {
    index.destroy();
    client.destroy();
  }
  manifest.finishedAt = new Date().toISOString();
  await writeFile(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

/** S3's CopySource: the bucket and the key, each path segment URL-encoded. */
const copySource = (bucket, key) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/**
 * Loads a backup folder into `namespace`, whose databases must be empty. A backup with copied
 * objects needs an empty key prefix too and puts every object back. A backup that listed its
 * objects takes them from the bucket itself: back into the namespace it came from, every listed
 * object must still be there (nothing is copied); into another namespace, each is copied inside
 * the bucket. Objects the bucket no longer holds are named before anything is restored.
 */
export async function restore({ mongoUrl, s3, namespace, from, parallel = DEFAULT_PARALLEL, log = () => {} }) {
  const manifest = JSON.parse(await readFile(join(from, 'manifest.json'), 'utf8'));
  const prefix = keyPrefix(s3, namespace);
  const listed = manifest.s3.copied === false;
  const inPlace = listed && manifest.s3.prefix === prefix;
  const client = s3Client(s3);
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    for (const service of Object.keys(manifest.databases)) {
      const existing = await mongo.db(`${namespace}_${service}`).listCollections({}, { nameOnly: true }).toArray();
      if (existing.some((collection) => !collection.name.startsWith('system.'))) {
        throw new Error(`the database ${namespace}_${service} already holds collections: restore into a new namespace, or drop it first`);
      }
    }
    if (!inPlace) {
      for await (const _ of objectsUnder(client, s3.bucket, prefix)) {
        throw new Error(`s3://${s3.bucket}/${prefix} already holds objects: restore into a new namespace, or empty it first`);
      }
    }
    if (listed) {
      const missing = [];
      await eachBounded(linesOf(join(from, 's3-objects.ndjson')), parallel, async (line) => {
        const { key } = JSON.parse(line);
        await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: manifest.s3.prefix + key })).catch((error) => {
          if (error?.$metadata?.httpStatusCode === 404 || error?.name === 'NotFound') missing.push(key);
          else throw error;
        });
      });
      if (missing.length) {
        throw new Error(
          `the bucket no longer holds ${missing.length} of the objects this backup listed under s3://${s3.bucket}/${manifest.s3.prefix} ` +
            `(${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}): bring them back from the bucket's earlier versions or its replica first (docs/OPERATIONS.md)`,
        );
      }
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
      if (inPlace) return void (objects += 1);
      if (listed) {
        // Inside the bucket: no byte passes through here; the object keeps its content type.
        await client.send(
          new CopyObjectCommand({ Bucket: s3.bucket, Key: prefix + key, CopySource: copySource(s3.bucket, manifest.s3.prefix + key) }),
        );
        objects += 1;
        return;
      }
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
    log(`s3 ${s3.bucket}/${prefix}: ${objects} objects ${inPlace ? 'found in place' : listed ? 'copied inside the bucket' : 'restored'}`);
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
 * manifest.json has finishedAt; names sort by time, as backup --root and the CronJob name them)
 * and removes the older ones, and every unfinished folder of a run that failed: older than the
 * newest finished one, or untouched for STALE_MS (a running backup touches its .in-progress file
 * every HEARTBEAT_MS; a run that was killed stops doing so). Returns the names removed.
 */
export async function prune({ root, keep, log = () => {}, now = Date.now() }) {
  if (!Number.isInteger(keep) || keep < 1) throw new Error('--keep must be a whole number of at least 1');
  const folders = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const folder = join(root, entry.name);
    const manifest = await readFile(join(folder, 'manifest.json'), 'utf8').then(JSON.parse, () => null);
    const touched = await stat(join(folder, IN_PROGRESS)).catch(() => stat(folder));
    folders.push({ name: entry.name, finished: Boolean(manifest?.finishedAt), idle: now - touched.mtimeMs > STALE_MS });
  }
  folders.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)); // newest first
  const newestFinished = folders.findIndex((folder) => folder.finished);
  const removed = [];
  let kept = 0;
  for (const [at, folder] of folders.entries()) {
    const stale = folder.finished ? ++kept > keep : folder.idle || (newestFinished >= 0 && at > newestFinished);
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
    const root = args.includes('--root') ? option(args, 'root') : undefined;
    const manifest = await backup({
      ...servers,
      namespace: option(args, 'namespace'),
      ...(root !== undefined ? { root, keep: Number(option(args, 'keep')) } : { out: option(args, 'out') }),
      objects: args.includes('--objects') ? option(args, 'objects') : 'copy',
      reserve: args.includes('--reserve') ? parseSize(option(args, 'reserve')) : 0,
      parallel: parallelOption(args),
      log,
    });
    console.log(
      `backup of ${manifest.namespace} written to ${manifest.folder} (${manifest.s3.objects} objects ${manifest.s3.copied ? 'copied' : 'listed'})`,
    );
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
      'usage: portal-backup.mjs backup --namespace NS (--out DIR | --root DIR --keep N) [--objects copy|list] [--reserve SIZE] [--parallel N] | restore --from DIR --namespace NS [--parallel N] | verify --from DIR --namespace NS | prune --root DIR --keep N',
    );
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = error instanceof NoSpaceError ? NO_SPACE_EXIT_CODE : 1;
  });
}
