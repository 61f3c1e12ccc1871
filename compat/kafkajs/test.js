'use strict'
// kafkajs (npm, pinned in package.json and package-lock.json) driving one
// compat scenario, as compat/README.md describes:
//
//   node compat/kafkajs/test.js produce
//
// prints one JSON line {"client", "scenario", "status", "detail", ...}.
// kafkajs ships gzip only and takes other codecs as plugins: snappy is
// kafkajs-snappy, as its documentation says. The documented lz4 and zstd
// plugins (kafkajs-lz4, @kafkajs/zstd) need native builds, so lz4 and zstd
// are small codecs over the pure-JavaScript lz4js and zstd-codec packages,
// registered the same way.

const {
  Kafka, logLevel, CompressionTypes, CompressionCodecs, ConfigResourceTypes, Partitioners,
} = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const lz4 = require('lz4js')
const { ZstdCodec } = require('zstd-codec')

const CLIENT = 'kafkajs'
const VERSION = require('kafkajs/package.json').version
const SECURITY_SCENARIOS = ['scram-ssl', 'plain-ssl', 'mtls', 'oauth']
const SCENARIOS = ['metadata', 'produce', 'consume', 'groups', 'transactions', 'admin', 'errors', ...SECURITY_SCENARIOS]
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
const NUM_KEYS = 97
const PADDING = 'samsa-compat-'.repeat(8) + 'ok'
const GROUP_PARTITIONS = 4
const GROUP_FIRST = 400
const GROUP_SECOND = 100
const IDEM_RECORDS = 1000
const TXN_RECORDS = 128
const SEND_CHUNK = 1000 // records per send() call

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress (encoder) { return Buffer.from(lz4.compress(encoder.buffer)) },
  async decompress (buffer) { return Buffer.from(lz4.decompress(buffer)) },
})
CompressionCodecs[CompressionTypes.ZSTD] = (() => {
  const ready = new Promise((resolve) => ZstdCodec.run((zstd) => resolve(new zstd.Streaming())))
  return () => ({
    async compress (encoder) { return Buffer.from((await ready).compress(encoder.buffer, 3)) },
    async decompress (buffer) { return Buffer.from((await ready).decompress(buffer)) },
  })
})()

const CODEC_TYPE = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

class Failed extends Error {}
class NotApplicable extends Error {}
class PassWith extends Error {}

const env = {
  bootstrap: process.env.COMPAT_BOOTSTRAP || '127.0.0.1:9092',
  prefix: process.env.COMPAT_PREFIX || 'compat-kafkajs',
  records: parseInt(process.env.COMPAT_RECORDS || '10000', 10),
  timeout: parseInt(process.env.COMPAT_TIMEOUT || '120', 10),
  topic (name) { return `${this.prefix}-${name}` },
}

function log (msg) {
  process.stderr.write(`[kafkajs ${new Date().toISOString().slice(11, 23)}] ${msg}\n`)
}

const kafka = new Kafka({
  clientId: 'compat-kafkajs',
  brokers: [env.bootstrap],
  logLevel: logLevel.WARN,
  logCreator: () => ({ namespace, level, log: entry }) => {
    const { message, ...extra } = entry
    process.stderr.write(`[kafkajs log ${level}] ${namespace}: ${message} ${JSON.stringify(extra)}\n`)
  },
})

const keyFor = (i) => `key-${String(i % NUM_KEYS).padStart(3, '0')}`
const valueFor = (i) => `value-${String(i).padStart(6, '0')}-${PADDING}`
const headersFor = (i) => [['idx', String(i)], ['client', CLIENT]]
const tsBase = () => (Math.floor(Date.now() / 1000) - 3600) * 1000
const range = (lo, hi) => Array.from({ length: hi - lo }, (_, k) => lo + k)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function idxOf (value) {
  if (!value.startsWith('value-') || value.length < 12) return null
  const n = Number(value.slice(6, 12))
  return Number.isInteger(n) ? n : null
}

function message (i, base) {
  const m = { key: keyFor(i), value: valueFor(i), headers: Object.fromEntries(headersFor(i)) }
  if (base !== undefined) m.timestamp = String(base + i)
  return m
}

function recordOf (partition, m) {
  return {
    partition,
    offset: Number(m.offset),
    key: m.key ? m.key.toString() : '',
    value: m.value ? m.value.toString() : '',
    headers: Object.entries(m.headers || {}).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString() : String(v)]),
    timestamp: Number(m.timestamp),
  }
}

// verify: every index in idx exactly once and nothing else; keys, values,
// headers and timestamps intact; per partition, offsets and production order
// increasing; equal keys on one partition.
function verify (got, idx, { wantHeaders, wantTs } = {}) {
  const want = new Set(idx)
  const problems = []
  const add = (m) => { if (problems.length < 8) problems.push(m) }
  const seen = new Map()
  const last = new Map()
  const keyPart = new Map()
  for (const r of got) {
    const i = idxOf(r.value)
    if (i === null) { add(`partition ${r.partition} offset ${r.offset}: unexpected value ${r.value.slice(0, 40)}`); continue }
    if (!want.has(i)) { add(`record ${i} (partition ${r.partition} offset ${r.offset}) was not expected here`); continue }
    if (seen.has(i)) { add(`record ${i} delivered twice (partition ${r.partition} offsets ${seen.get(i).offset} and ${r.offset})`); continue }
    seen.set(i, r)
    if (r.key !== keyFor(i)) add(`record ${i}: key ${r.key}, want ${keyFor(i)}`)
    if (r.value !== valueFor(i)) add(`record ${i}: value ${r.value.slice(0, 40)}, want ${valueFor(i).slice(0, 40)}`)
    if (wantHeaders && JSON.stringify(r.headers) !== JSON.stringify(wantHeaders(i))) {
      add(`record ${i}: headers ${JSON.stringify(r.headers)}, want ${JSON.stringify(wantHeaders(i))}`)
    }
    if (wantTs && r.timestamp !== wantTs(i)) add(`record ${i}: timestamp ${r.timestamp}, want ${wantTs(i)}`)
    const prev = last.get(r.partition)
    if (prev) {
      if (r.offset <= prev.offset) add(`partition ${r.partition}: offset ${r.offset} after ${prev.offset}`)
      if (i < idxOf(prev.value)) add(`partition ${r.partition}: record ${i} after record ${idxOf(prev.value)} (production order lost)`)
    }
    last.set(r.partition, r)
    if (keyPart.has(r.key) && keyPart.get(r.key) !== r.partition) add(`key ${r.key} on partitions ${keyPart.get(r.key)} and ${r.partition}`)
    keyPart.set(r.key, r.partition)
  }
  const missing = idx.filter((i) => !seen.has(i))
  if (missing.length) add(`${missing.length} of ${idx.length} records missing (first: ${missing.slice(0, 5)})`)
  if (problems.length) throw new Failed(`${got.length} records consumed: ${problems.join('; ')}`)
}

async function waitFor (limitMs, cond) {
  const end = Date.now() + limitMs
  for (;;) {
    const why = await cond()
    if (why === null) return
    if (Date.now() >= end) throw new Failed(why)
    await sleep(200)
  }
}

async function withAdmin (fn) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

async function waitPartitions (admin, topic, n) {
  await waitFor(15000, async () => {
    let md
    try {
      md = await admin.fetchTopicMetadata({ topics: [topic] })
    } catch (e) {
      return `metadata for ${topic}: ${e.message}`
    }
    const t = md.topics.find((x) => x.name === topic)
    if (!t) return `metadata has no topic ${topic}`
    if (t.partitions.length !== n) return `metadata shows ${t.partitions.length} partitions for ${topic}, want ${n}`
    for (const p of t.partitions) {
      if (p.partitionErrorCode !== 0 || p.leader < 0) return `partition ${p.partitionId} of ${topic}: leader ${p.leader}, error ${p.partitionErrorCode}`
    }
    return null
  })
}

async function createTopic (topic, partitions, configEntries = []) {
  await withAdmin(async (admin) => {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries }],
      waitForLeaders: true,
      timeout: 20000,
    })
    if (!created) throw new Failed(`create topic ${topic}: it already exists`)
    await waitPartitions(admin, topic, partitions)
  })
}

async function metadata () {
  await withAdmin(async (admin) => {
    const cl = await admin.describeCluster()
    const addrs = cl.brokers.map((b) => `${b.host}:${b.port}`)
    if (!addrs.includes(env.bootstrap)) throw new Failed(`metadata lists brokers ${addrs}, none is the bootstrap ${env.bootstrap}`)
    if (!cl.clusterId) throw new Failed('metadata has no cluster id')
  })
  const topic = env.topic('metadata')
  await createTopic(topic, 3)
  await withAdmin(async (admin) => {
    // kafkajs resolves createTopics to false when the topic exists
    // (TOPIC_ALREADY_EXISTS).
    const created = await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], timeout: 20000 })
    if (created !== false) throw new Failed('creating an existing topic did not report that it exists')
  })
}

function producer (opts = {}) {
  return kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner, ...opts })
}

// produceRange sends records lo..hi-1 in chunks; returns partition -> base
// offsets acknowledged.
async function produceRange (send, topic, lo, hi, { base, acks = -1, compression = CompressionTypes.None } = {}) {
  const acked = {}
  for (let s = lo; s < hi; s += SEND_CHUNK) {
    const msgs = range(s, Math.min(hi, s + SEND_CHUNK)).map((i) => message(i, base))
    const res = await send({ topic, messages: msgs, acks, compression, timeout: 30000 })
    for (const r of res) {
      if (r.errorCode !== 0) throw new Failed(`produce: partition ${r.partition} error ${r.errorCode}`)
      acked[r.partition] = (acked[r.partition] || []).concat(Number(r.baseOffset))
    }
  }
  return acked
}

async function endOffsets (topic) {
  return withAdmin(async (admin) => {
    const offs = await admin.fetchTopicOffsets(topic)
    return Object.fromEntries(offs.map((o) => [o.partition, Number(o.high)]))
  })
}

async function produce () {
  for (const codec of CODECS) {
    const topic = env.topic(`produce-${codec}`)
    await createTopic(topic, 3)
    for (const [acks, lo] of [[-1, 0], [1, env.records]]) {
      const p = producer()
      await p.connect()
      try {
        const acked = await produceRange((r) => p.send(r), topic, lo, lo + env.records, { base: tsBase(), acks, compression: CODEC_TYPE[codec] })
        for (const [part, bases] of Object.entries(acked)) {
          for (let k = 1; k < bases.length; k++) {
            if (bases[k] <= bases[k - 1]) throw new Failed(`${codec} acks=${acks}: partition ${part} base offset ${bases[k]} after ${bases[k - 1]}`)
          }
        }
      } finally {
        await p.disconnect()
      }
    }
    const ends = await endOffsets(topic)
    const sum = Object.values(ends).reduce((a, b) => a + b, 0)
    if (sum !== 2 * env.records) throw new Failed(`${codec}: end offsets ${JSON.stringify(ends)} sum to ${sum}, want ${2 * env.records}`)
    log(`produce ${codec}: ${2 * env.records} records, end offsets ${JSON.stringify(ends)}`)
  }
  throw new PassWith('kafkajs reports base offsets per batch: checked they increase and the end offsets')
}

// consumeN reads topic from the beginning with a consumer of a fresh group
// (kafkajs consumes only through a group) until n records arrived, plus a
// second's grace.
async function consumeN (topic, n, opts = {}) {
  const c = kafka.consumer({ groupId: `${env.topic('reader')}-${Date.now()}`, maxWaitTimeInMs: 250, heartbeatInterval: 500, ...opts })
  await c.connect()
  const got = []
  try {
    await c.subscribe({ topics: [topic], fromBeginning: true })
    await c.run({ autoCommit: false, eachMessage: async ({ partition, message: m }) => { got.push(recordOf(partition, m)) } })
    await waitFor(env.timeout * 1000, async () => got.length >= n ? null : `consumed ${got.length} of ${n} records`)
    await sleep(1000)
    return got.slice()
  } finally {
    await c.disconnect()
  }
}

async function consume () {
  const topic = env.topic('consume')
  await createTopic(topic, 3)
  const base = tsBase()
  const chunk = Math.floor(env.records / CODECS.length)
  const p = producer()
  await p.connect()
  try {
    for (const [c, codec] of CODECS.entries()) {
      const hi = c === CODECS.length - 1 ? env.records : (c + 1) * chunk
      await produceRange((r) => p.send(r), topic, c * chunk, hi, { base, compression: CODEC_TYPE[codec] })
    }
  } finally {
    await p.disconnect()
  }
  const got = await consumeN(topic, env.records)
  verify(got, range(0, env.records), { wantHeaders: headersFor, wantTs: (i) => base + i })
}

class Member {
  constructor (topic, group) {
    this.topic = topic
    this.held = []
    this.got = []
    this.next = {}
    this.c = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 250, rebalanceTimeout: 10000 })
    this.c.on(this.c.events.GROUP_JOIN, (e) => { this.held = (e.payload.memberAssignment[topic] || []).slice().sort() })
  }

  async start () {
    await this.c.connect()
    await this.c.subscribe({ topics: [this.topic], fromBeginning: true })
    await this.c.run({
      autoCommit: false,
      eachMessage: async ({ partition, message: m }) => {
        this.got.push(recordOf(partition, m))
        this.next[partition] = Number(m.offset) + 1
      },
    })
    return this
  }

  async commit () {
    await this.c.commitOffsets(Object.entries(this.next).map(([partition, offset]) => ({ topic: this.topic, partition: Number(partition), offset: String(offset) })))
  }
}

async function waitStableSplit (a, b) {
  let since = null
  let last = ''
  await waitFor(45000, async () => {
    const pa = a.held
    const pb = b.held
    const all = new Set([...pa, ...pb])
    let why = null
    if (!pa.length || !pb.length) why = `members hold ${JSON.stringify(pa)} and ${JSON.stringify(pb)}: not split yet`
    else if (all.size !== pa.length + pb.length || all.size !== GROUP_PARTITIONS) why = `members hold ${JSON.stringify(pa)} and ${JSON.stringify(pb)}: not a split of ${GROUP_PARTITIONS}`
    if (why) { since = null; return why }
    const cur = JSON.stringify([pa, pb])
    if (cur !== last || since === null) { last = cur; since = Date.now() }
    return Date.now() - since >= 1000 ? null : `members hold ${cur}, waiting for it to settle`
  })
  return [a.held.slice(), b.held.slice()]
}

function checkMemberRecords (ga, pa, gb, pb, lo, hi) {
  for (const [name, got, parts] of [['first', ga, pa], ['second', gb, pb]]) {
    for (const r of got) {
      if (!parts.includes(r.partition)) throw new Failed(`${name} member got a record from partition ${r.partition}, it holds ${JSON.stringify(parts)}`)
    }
    if (!got.length) throw new Failed(`${name} member got no records`)
  }
  verify(ga.concat(gb), range(lo, hi))
}

async function groups () {
  const topic = env.topic('groups')
  const group = env.topic('group')
  await createTopic(topic, GROUP_PARTITIONS)
  const a = await new Member(topic, group).start()
  const b = await new Member(topic, group).start()
  const p = producer()
  await p.connect()
  try {
    const [pa, pb] = await waitStableSplit(a, b)
    log(`members hold ${JSON.stringify(pa)} and ${JSON.stringify(pb)}`)
    await produceRange((r) => p.send(r), topic, 0, GROUP_FIRST)
    await waitFor(30000, async () => {
      const n = a.got.length + b.got.length
      return n >= GROUP_FIRST ? null : `members consumed ${n} of ${GROUP_FIRST} records`
    })
    await sleep(500)
    checkMemberRecords(a.got, pa, b.got, pb, 0, GROUP_FIRST)
    await a.commit()
    await b.commit()
    const committed = await withAdmin((admin) => admin.fetchOffsets({ groupId: group, topics: [topic] }))
    const sum = committed[0].partitions.reduce((s, x) => s + Math.max(0, Number(x.offset)), 0)
    if (sum !== GROUP_FIRST) throw new Failed(`committed offsets sum to ${sum}, want ${GROUP_FIRST}`)
    await a.c.disconnect()
    await b.c.disconnect()
    await produceRange((r) => p.send(r), topic, GROUP_FIRST, GROUP_FIRST + GROUP_SECOND)
  } finally {
    await p.disconnect()
    await a.c.disconnect()
    await b.c.disconnect()
  }
  const c = await new Member(topic, group).start()
  try {
    await waitFor(30000, async () => c.got.length >= GROUP_SECOND ? null : `restarted member consumed ${c.got.length} of ${GROUP_SECOND} new records`)
    await sleep(500)
  } finally {
    await c.c.disconnect()
  }
  try {
    verify(c.got, range(GROUP_FIRST, GROUP_FIRST + GROUP_SECOND))
  } catch (e) {
    throw new Failed(`after restart (should resume at the committed offsets): ${e.message}`)
  }
}

async function transactions () {
  let topic = env.topic('idempotent')
  await createTopic(topic, 3)
  const ip = producer({ idempotent: true, maxInFlightRequests: 1 })
  await ip.connect()
  try {
    await produceRange((r) => ip.send(r), topic, 0, IDEM_RECORDS)
  } finally {
    await ip.disconnect()
  }
  try {
    verify(await consumeN(topic, IDEM_RECORDS), range(0, IDEM_RECORDS))
  } catch (e) {
    throw new Failed(`idempotent: ${e.message}`)
  }

  topic = env.topic('txn')
  await createTopic(topic, 3)
  const tp = producer({ transactionalId: env.topic('txid'), idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60000 })
  await tp.connect()
  try {
    const A = 0
    const B = TXN_RECORDS
    const C = 2 * TXN_RECORDS
    for (const [lo, commit] of [[A, true], [B, false]]) {
      const txn = await tp.transaction()
      await produceRange((r) => txn.send(r), topic, lo, lo + TXN_RECORDS)
      if (commit) await txn.commit()
      else await txn.abort()
    }
    const open = await tp.transaction()
    await produceRange((r) => open.send(r), topic, C, C + TXN_RECORDS)
    try {
      verify(await consumeN(topic, TXN_RECORDS), range(A, A + TXN_RECORDS))
    } catch (e) {
      throw new Failed(`read_committed while a transaction is open (want only the committed one): ${e.message}`)
    }
    await open.commit()
    try {
      verify(await consumeN(topic, 2 * TXN_RECORDS), range(A, A + TXN_RECORDS).concat(range(C, C + TXN_RECORDS)))
    } catch (e) {
      throw new Failed(`read_committed (want the two committed transactions): ${e.message}`)
    }
    try {
      verify(await consumeN(topic, 3 * TXN_RECORDS, { readUncommitted: true }), range(0, 3 * TXN_RECORDS))
    } catch (e) {
      throw new Failed(`read_uncommitted (want all three transactions): ${e.message}`)
    }
  } finally {
    await tp.disconnect()
  }
}

async function admin () {
  const topic = env.topic('admin')
  await createTopic(topic, 2, [{ name: 'retention.ms', value: '3600000' }])
  await withAdmin(async (admin) => {
    const cl = await admin.describeCluster()
    const broker = String(Math.min(...cl.brokers.map((b) => b.nodeId)))
    const res = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }, { type: ConfigResourceTypes.BROKER, name: broker }],
    })
    const cfgs = {}
    for (const r of res.resources) {
      if (r.errorCode !== 0) throw new Failed(`describe configs of ${r.resourceName}: error ${r.errorCode} ${r.errorMessage}`)
      cfgs[r.resourceName] = Object.fromEntries(r.configEntries.map((e) => [e.configName, e.configValue]))
    }
    const cfg = cfgs[topic] || {}
    if (cfg['retention.ms'] !== '3600000') throw new Failed(`describe configs: retention.ms = ${cfg['retention.ms']}, want the 3600000 set at creation`)
    if (cfg['cleanup.policy'] !== 'delete') throw new Failed(`describe configs: cleanup.policy = ${cfg['cleanup.policy']}, want the default delete`)
    const bcfg = cfgs[broker] || {}
    if (bcfg['auto.create.topics.enable'] !== 'false') throw new Failed(`describe broker configs: auto.create.topics.enable = ${bcfg['auto.create.topics.enable']}, want false`)
    await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }], timeout: 20000 })
    await waitPartitions(admin, topic, 4)
    await admin.deleteTopics({ topics: [topic], timeout: 20000 })
    await waitFor(15000, async () => (await admin.listTopics()).includes(topic) ? 'deleted topic still listed' : null)
  })
}

function errorTypes (e) {
  const out = []
  for (let x = e; x; x = x.originalError || x.cause) {
    out.push(x.type || x.name)
    if (out.length > 10) break
  }
  return out
}

async function errors () {
  const topic = env.topic('missing')
  const p = producer({ retry: { retries: 3 } })
  await p.connect()
  const start = Date.now()
  let err = null
  try {
    await p.send({ topic, messages: [{ value: 'x' }], acks: -1, timeout: 10000 })
  } catch (e) {
    err = e
  } finally {
    await p.disconnect()
  }
  const took = ((Date.now() - start) / 1000).toFixed(1)
  if (!err) throw new Failed('produce to a topic that does not exist succeeded')
  const types = errorTypes(err)
  if (!types.includes('UNKNOWN_TOPIC_OR_PARTITION')) throw new Failed(`after ${took}s: got ${err.name}: ${err.message} (${types}), want UNKNOWN_TOPIC_OR_PARTITION`)
  const topics = await withAdmin((admin) => admin.listTopics())
  if (topics.includes(topic)) throw new Failed(`topic ${topic} exists after the failed produce: the broker auto-created it`)
  throw new PassWith(`${err.name}: ${err.message} (${types.join(' < ')}) after ${took}s`)
}

// The security scenarios (compat/README.md, "Security"; mirrors
// compat/go/secure.go): SECURE_RECORDS records produced over one secured
// listener with kafkajs's ssl and sasl options, read back from the start
// of the topic's one partition and checked in order; scram-ssl also checks
// that a wrong password is refused with an authentication error.
const SECURE_RECORDS = 200
const AUTH_ERROR = /authenticat|SASL|credentials/i

function secureSettings (scenario) {
  const [protocol, mechanism, address] = {
    'scram-ssl': ['SASL_SSL', 'scram-sha-512', 'COMPAT_SASL_SSL_BOOTSTRAP'],
    'plain-ssl': ['SASL_SSL', 'plain', 'COMPAT_SASL_SSL_BOOTSTRAP'],
    mtls: ['SSL', null, 'COMPAT_SSL_BOOTSTRAP'],
    oauth: ['SASL_PLAINTEXT', 'oauthbearer', 'COMPAT_SASL_PLAINTEXT_BOOTSTRAP'],
  }[scenario]
  const s = {
    protocol,
    mechanism,
    bootstrap: process.env[address],
    user: process.env.COMPAT_SASL_USER,
    password: process.env.COMPAT_SASL_PASSWORD,
  }
  if (!s.bootstrap || !s.user || !process.env.COMPAT_SSL_CA) {
    throw new Failed('the security scenarios need the runner\'s COMPAT_SASL_*/COMPAT_SSL_* environment')
  }
  return s
}

// unsecuredToken is an unsecured JWS (KIP-255: header {"alg":"none"}, no
// signature) naming sub, valid for an hour.
function unsecuredToken (sub) {
  const now = Math.floor(Date.now() / 1000)
  const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${enc({ alg: 'none' })}.${enc({ sub, iat: now, exp: now + 3600 })}.`
}

function secureKafka (s) {
  const fs = require('fs')
  const config = { clientId: 'compat-kafkajs', brokers: [s.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }
  if (s.protocol.endsWith('SSL')) {
    config.ssl = { ca: [fs.readFileSync(process.env.COMPAT_SSL_CA)] }
    if (!s.mechanism) {
      config.ssl.cert = fs.readFileSync(process.env.COMPAT_SSL_CERT)
      config.ssl.key = fs.readFileSync(process.env.COMPAT_SSL_KEY)
    }
  }
  if (s.mechanism === 'oauthbearer') {
    config.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: unsecuredToken(s.user) }) }
  } else if (s.mechanism) {
    config.sasl = { mechanism: s.mechanism, username: s.user, password: s.password }
  }
  return new Kafka(config)
}

function secureScenario (name) {
  return async () => {
    const s = secureSettings(name)
    const topic = env.topic(name)
    const values = Array.from({ length: SECURE_RECORDS }, (_, i) => `${name}-${i}`)
    log(`${name}: producing ${SECURE_RECORDS} records over ${s.protocol} ${s.mechanism || ''}`)
    const client = secureKafka(s)
    const p = client.producer({ allowAutoTopicCreation: false })
    await p.connect()
    try {
      await p.send({ topic, acks: -1, messages: values.map((v) => ({ value: v, partition: 0 })) })
    } finally {
      await p.disconnect()
    }
    // kafkajs consumes only through a group: a fresh one, from the start.
    const c = client.consumer({ groupId: `${env.topic(name)}-reader-${Date.now()}`, maxWaitTimeInMs: 250 })
    await c.connect()
    const got = []
    try {
      await c.subscribe({ topics: [topic], fromBeginning: true })
      await c.run({ autoCommit: false, eachMessage: async ({ message: m }) => { got.push(m.value.toString()) } })
      await waitFor(env.timeout * 1000, async () => got.length >= SECURE_RECORDS ? null : `consumed ${got.length} of ${SECURE_RECORDS} records`)
      await sleep(500)
    } finally {
      await c.disconnect()
    }
    if (got.length !== values.length || got.some((v, i) => v !== values[i])) {
      throw new Failed(`read ${got.length} records back, not the ${values.length} produced in order`)
    }
    if (name !== 'scram-ssl') return
    const wrong = secureKafka({ ...s, password: `not-${s.password}` }).admin()
    let refused = null
    try {
      await wrong.connect()
      await wrong.listTopics()
    } catch (e) {
      refused = e
    } finally {
      await wrong.disconnect().catch(() => {})
    }
    if (!refused) throw new Failed('a wrong SCRAM password was accepted')
    if (!AUTH_ERROR.test(`${refused.name} ${refused.message}`)) {
      throw new Failed(`a wrong SCRAM password failed without an authentication error: ${refused.name}: ${refused.message}`)
    }
    throw new PassWith(`wrong password refused: ${refused.name}: ${refused.message}`.slice(0, 140))
  }
}

const FNS = { metadata, produce, consume, groups, transactions, admin, errors }
for (const name of SECURITY_SCENARIOS) FNS[name] = secureScenario(name)

async function main () {
  const name = process.argv[2]
  if (!SCENARIOS.includes(name)) {
    process.stderr.write(`usage: node test.js SCENARIO (one of ${SCENARIOS.join(', ')})\n`)
    process.exit(2)
  }
  const start = Date.now()
  const res = { client: CLIENT, scenario: name, version: VERSION, detail: '' }
  const finish = () => {
    res.seconds = ((Date.now() - start) / 1000).toFixed(1)
    process.stdout.write(JSON.stringify(res) + '\n', () => process.exit(0))
  }
  const budget = Math.max(5, env.timeout - 5) * 1000
  const timer = setTimeout(() => {
    res.status = 'fail'
    res.detail = `timed out after ${budget / 1000}s`
    finish()
  }, budget)
  try {
    await FNS[name]()
    res.status = 'pass'
  } catch (e) {
    if (e instanceof PassWith) res.status = 'pass'
    else if (e instanceof NotApplicable) res.status = 'n/a'
    else {
      res.status = 'fail'
      if (!(e instanceof Failed)) process.stderr.write(`${e.stack}\n`)
    }
    res.detail = e instanceof Failed || e instanceof PassWith || e instanceof NotApplicable ? e.message : `${e.name}: ${e.message}`
  }
  clearTimeout(timer)
  finish()
}

main()
