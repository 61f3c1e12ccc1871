// @kafkajs/confluent-schema-registry against a Samsa node: for Avro, JSON
// Schema and Protobuf it registers a schema, encodes a value, produces it
// with kafkajs, consumes it and decodes it. Usage: node registry_kafkajs.js
// BOOTSTRAP REGISTRY_URL. Prints "ok <format>" per format; exits non-zero on
// any failure.
const { Kafka, logLevel } = require('kafkajs')
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry')

const [bootstrap, registryURL] = process.argv.slice(2)
const registry = new SchemaRegistry({ host: registryURL })
const kafka = new Kafka({ clientId: 'js-registry', brokers: [bootstrap], logLevel: logLevel.NOTHING })

const formats = [
  {
    name: 'avro',
    schema: { type: SchemaType.AVRO, schema: JSON.stringify({ type: 'record', name: 'Reading', namespace: 'js', fields: [{ name: 'sensor', type: 'string' }, { name: 'value', type: 'double' }] }) },
    value: { sensor: 's-avro', value: 1.5 },
  },
  {
    name: 'json',
    schema: { type: SchemaType.JSON, schema: JSON.stringify({ type: 'object', properties: { sensor: { type: 'string' }, value: { type: 'number' } }, required: ['sensor'] }) },
    value: { sensor: 's-json', value: 2.5 },
  },
  {
    name: 'protobuf',
    schema: { type: SchemaType.PROTOBUF, schema: 'syntax = "proto3";\npackage js;\nmessage Reading {\n  string sensor = 1;\n  double value = 2;\n}\n' },
    value: { sensor: 's-protobuf', value: 3.5 },
  },
]

async function main() {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: formats.map(f => ({ topic: 'js-' + f.name, numPartitions: 1, replicationFactor: 1 })) })
  await admin.disconnect()
  const producer = kafka.producer()
  await producer.connect()
  for (const format of formats) {
    const topic = 'js-' + format.name
    const { id } = await registry.register(format.schema, { subject: topic + '-value' })
    const again = await registry.getLatestSchemaId(topic + '-value')
    if (again !== id) throw new Error(`${format.name}: latest id ${again}, registered ${id}`)
    const encoded = await registry.encode(id, format.value)
    await producer.send({ topic, messages: [{ value: encoded }] })

    const consumer = kafka.consumer({ groupId: topic })
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    const decoded = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${format.name}: nothing consumed`)), 30000)
      consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer)
          try { resolve(await registry.decode(message.value)) } catch (err) { reject(err) }
        },
      })
    })
    await consumer.disconnect()
    const got = { sensor: decoded.sensor, value: decoded.value }
    if (JSON.stringify(got) !== JSON.stringify(format.value)) {
      throw new Error(`${format.name}: decoded ${JSON.stringify(got)}, want ${JSON.stringify(format.value)}`)
    }
    console.log(`ok ${format.name} id=${id}`)
  }
  await producer.disconnect()
}

main().catch(err => { console.error(err); process.exit(1) })
