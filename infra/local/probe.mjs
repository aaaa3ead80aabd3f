#!/usr/bin/env node
// Readiness probes for the servers started by servers.sh. No dependencies: each probe speaks the
// server's own protocol over a socket, so "ready" means the server answers a real request, not
// just that its port is open.
//
//   node probe.mjs '<json>'   where <json> is an array of
//   { "name": "kafka", "kind": "kafka|mongo|redis|s3|smtp|http", "host": "127.0.0.1", "port": 1234,
//     "pid": 4321, "timeout": 90, ...kind-specific fields }
//
// All probes run at once. Each retries until it succeeds, its timeout (seconds) passes, or its
// pid is gone. Prints one line per server, `READY <name> <ms>` or `FAIL <name> <reason>`, and exits
// 0 only if every server is ready.
import net from 'node:net';
import http from 'node:http';
import crypto from 'node:crypto';

const ATTEMPT_MS = 5000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One TCP exchange: connect, call `talk(send, read)`, close. `read(n)` resolves with a Buffer once
 *  the received bytes satisfy `want(buf)`. */
function exchange(host, port, talk) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    let waiter = null;
    const timer = setTimeout(() => fail(new Error('no answer within 5 s')), ATTEMPT_MS);
    const fail = (e) => {
      clearTimeout(timer);
      sock.destroy();
      reject(e);
    };
    const check = () => {
      if (waiter && waiter.want(buf)) {
        const w = waiter;
        waiter = null;
        w.resolve(buf);
      }
    };
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      check();
    });
    sock.on('error', fail);
    sock.on('close', () => {
      if (waiter) fail(new Error('connection closed'));
    });
    sock.on('connect', async () => {
      try {
        const out = await talk(
          (data) => sock.write(data),
          (want) =>
            new Promise((res) => {
              waiter = { want, resolve: res };
              check();
            }),
          () => {
            buf = Buffer.alloc(0);
          },
        );
        clearTimeout(timer);
        sock.end();
        resolve(out);
      } catch (e) {
        fail(e);
      }
    });
  });
}

// ---------- Kafka: ApiVersions, then FindCoordinator for a group and a transactional id ----------
const kstr = (s) => {
  const b = Buffer.from(s);
  const l = Buffer.alloc(2);
  l.writeInt16BE(b.length);
  return Buffer.concat([l, b]);
};
function kafkaRequest(apiKey, version, corr, body) {
  const head = Buffer.alloc(8);
  head.writeInt16BE(apiKey, 0);
  head.writeInt16BE(version, 2);
  head.writeInt32BE(corr, 4);
  const msg = Buffer.concat([head, kstr('portal-infra-probe'), body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(msg.length);
  return Buffer.concat([size, msg]);
}
const kafkaFrame = (b) => b.length >= 4 && b.length >= 4 + b.readInt32BE(0);
async function probeKafka(s) {
  return exchange(s.host, s.port, async (send, read, reset) => {
    send(kafkaRequest(18, 0, 1, Buffer.alloc(0))); // ApiVersions v0
    let r = await read(kafkaFrame);
    reset();
    const err = r.readInt16BE(8);
    if (err !== 0) throw new Error(`ApiVersions error ${err}`);
    // FindCoordinator v1 for a consumer group (key_type 0) and a transactional id (key_type 1): the
    // first call makes the broker create __consumer_offsets / __transaction_state; wait until both
    // coordinators are loaded so the first test does not see COORDINATOR_LOAD_IN_PROGRESS.
    for (const [corr, keyType] of [
      [2, 0],
      [3, 1],
    ]) {
      send(kafkaRequest(10, 1, corr, Buffer.concat([kstr('portal-infra-probe'), Buffer.from([keyType])])));
      r = await read(kafkaFrame);
      reset();
      const code = r.readInt16BE(12); // size(4) corr(4) throttle(4) error_code
      if (code !== 0)
        throw new Error(`FindCoordinator(${keyType ? 'transaction' : 'group'}) error code ${code} (coordinator not loaded yet)`);
    }
    return 'ApiVersions + group and transaction coordinators ready';
  });
}

// ---------- MongoDB wire protocol: OP_MSG { isMaster: 1, $db: "admin" } ----------
function bsonDoc(elems) {
  const parts = [];
  for (const [k, v] of elems) {
    const key = Buffer.from(k + '\0');
    if (typeof v === 'number') {
      const b = Buffer.alloc(4);
      b.writeInt32LE(v);
      parts.push(Buffer.from([0x10]), key, b);
    } else {
      const str = Buffer.from(v + '\0');
      const l = Buffer.alloc(4);
      l.writeInt32LE(str.length);
      parts.push(Buffer.from([0x02]), key, l, str);
    }
  }
  const body = Buffer.concat([...parts, Buffer.from([0])]);
  const len = Buffer.alloc(4);
  len.writeInt32LE(body.length + 4);
  return Buffer.concat([len, body]);
}
async function probeMongo(s) {
  return exchange(s.host, s.port, async (send, read) => {
    const doc = bsonDoc([
      ['isMaster', 1],
      ['$db', 'admin'],
    ]);
    const head = Buffer.alloc(16);
    head.writeInt32LE(16 + 4 + 1 + doc.length, 0);
    head.writeInt32LE(1, 4);
    head.writeInt32LE(0, 8);
    head.writeInt32LE(2013, 12);
    send(Buffer.concat([head, Buffer.alloc(4), Buffer.from([0]), doc]));
    const r = await read((b) => b.length >= 4 && b.length >= b.readInt32LE(0));
    if (r.readInt32LE(12) !== 2013) throw new Error(`unexpected opCode ${r.readInt32LE(12)}`);
    const at = r.indexOf(Buffer.from([0x01, 0x6f, 0x6b, 0x00]), 21); // double "ok"
    if (at < 0 || r.readDoubleLE(at + 4) !== 1) throw new Error('isMaster did not answer ok: 1');
    const wv = r.indexOf(Buffer.from('maxWireVersion\0'), 21);
    return wv > 0 ? `isMaster ok, maxWireVersion ${r.readInt32LE(wv + 15)}` : 'isMaster ok';
  });
}

// ---------- Redis: PING ----------
async function probeRedis(s) {
  return exchange(s.host, s.port, async (send, read) => {
    send('PING\r\n');
    const r = (await read((b) => b.includes('\r\n'))).toString();
    if (!r.startsWith('+PONG')) throw new Error(`PING answered ${JSON.stringify(r.trim())}`);
    return 'PING -> PONG';
  });
}

// ---------- SMTP: greeting, EHLO, QUIT ----------
async function probeSmtp(s) {
  return exchange(s.host, s.port, async (send, read, reset) => {
    const line = (code) => (b) => new RegExp(`(^|\\r\\n)${code} [^\\r\\n]*\\r\\n`).test(b.toString());
    await read(line('220'));
    reset();
    send('EHLO probe.localhost\r\n');
    await read((b) => /(^|\r\n)\d{3} [^\r\n]*\r\n/.test(b.toString()));
    send('QUIT\r\n');
    return '220 greeting, EHLO answered';
  });
}

// ---------- HTTP GET expecting 2xx ----------
function httpRequest(opts, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ ...opts, timeout: ATTEMPT_MS }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end(body);
  });
}
async function probeHttp(s) {
  const r = await httpRequest({ host: s.host, port: s.port, path: s.path || '/', method: 'GET' });
  if (r.status < 200 || r.status > 299) throw new Error(`GET ${s.path} -> ${r.status}`);
  return `GET ${s.path} -> ${r.status}`;
}

// ---------- S3: signed (SigV4) CreateBucket + HeadBucket ----------
const sha256 = (d) => crypto.createHash('sha256').update(d).digest('hex');
const hmac = (k, d) => crypto.createHmac('sha256', k).update(d).digest();
function s3Signed(s, method, path) {
  const amzDate = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const host = `${s.host}:${s.port}`;
  const payload = sha256('');
  const canonical = [
    method,
    path,
    '',
    `host:${host}`,
    `x-amz-content-sha256:${payload}`,
    `x-amz-date:${amzDate}`,
    '',
    'host;x-amz-content-sha256;x-amz-date',
    payload,
  ].join('\n');
  const scope = `${day}/${s.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac('AWS4' + s.secretKey, day);
  for (const part of [s.region, 's3', 'aws4_request']) key = hmac(key, part);
  const signature = crypto.createHmac('sha256', key).update(toSign).digest('hex');
  return httpRequest({
    host: s.host,
    port: s.port,
    path,
    method,
    headers: {
      host,
      'x-amz-date': amzDate,
      'x-amz-content-sha256': payload,
      'content-length': 0,
      authorization: `AWS4-HMAC-SHA256 Credential=${s.accessKey}/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${signature}`,
    },
  });
}
async function probeS3(s) {
  if (s.healthPath) await probeHttp({ ...s, path: s.healthPath });
  const path = '/' + encodeURIComponent(s.bucket);
  const made = await s3Signed(s, 'PUT', path);
  const exists = made.status === 409 && /BucketAlreadyOwnedByYou/.test(made.body);
  if (made.status !== 200 && !exists) throw new Error(`CreateBucket ${s.bucket} -> ${made.status} ${made.body.slice(0, 200)}`);
  const head = await s3Signed(s, 'HEAD', path);
  if (head.status !== 200) throw new Error(`HeadBucket ${s.bucket} -> ${head.status}`);
  return `signed CreateBucket${exists ? ' (already there)' : ''} + HeadBucket ${s.bucket}`;
}

const probes = {
  kafka: probeKafka,
  mongo: probeMongo,
  redis: probeRedis,
  smtp: probeSmtp,
  http: probeHttp,
  s3: probeS3,
  'kafka-log': (s) => probeKafkaLog(s),
};

// ---------- Kafka behind SASL or TLS: the broker's own "started" log line, then its port open ----------
async function probeKafkaLog(s) {
  const { readFile } = await import('node:fs/promises');
  const log = await readFile(s.log, 'utf8').catch(() => '');
  if (!/Kafka Server started/.test(log)) throw new Error('the broker has not logged "Kafka Server started" yet');
  await new Promise((resolve, reject) => {
    const sock = net.connect({ host: s.host, port: s.port }, () => {
      sock.destroy();
      resolve();
    });
    sock.on('error', reject);
  });
  return 'started (log), port open';
}

function alive(pid) {
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function waitFor(s) {
  const t0 = Date.now();
  const deadline = t0 + (s.timeout ?? 60) * 1000;
  let last = 'not tried';
  for (;;) {
    if (!alive(s.pid)) return `FAIL ${s.name} process ${s.pid} exited (last probe: ${last})`;
    try {
      const what = await probes[s.kind](s);
      return `READY ${s.name} ${Date.now() - t0} ms: ${what}`;
    } catch (e) {
      last = e.message || String(e);
    }
    if (Date.now() >= deadline) return `FAIL ${s.name} not ready after ${s.timeout ?? 60} s (last probe: ${last})`;
    await sleep(Date.now() - t0 < 5000 ? 100 : 250);
  }
}

const specs = JSON.parse(process.argv[2] || '[]');
let failed = 0;
await Promise.all(
  specs.map(async (s) => {
    const line = await waitFor(s);
    if (line.startsWith('FAIL')) failed++;
    console.log(line);
  }),
);
process.exit(failed ? 1 : 0);
