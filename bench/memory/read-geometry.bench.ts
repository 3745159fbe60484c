// SPDX-License-Identifier: Apache-2.0
// Cold read bandwidth by read geometry: how fast the engine's reader streams a package with O_DIRECT
// for each chunk size x queue depth (the `readGeometry` open option; io/reader.h ReadGeometry).
//
//   npm run bench:io                                      # ResNet-152's package from bench:memory
//   npm run bench:io -- --file some.fpk --rounds 6 --mib 256
//
// Reads the file's first --mib MiB (256) as 4 MiB ranges into a 32 MiB arena window, once per geometry
// per round, geometries in alternating order; prints the median GB/s per geometry and its ratio to the
// default geometry within each round, and writes bench/results/read-geometry.json.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { binding } from '../../lib/native/binding.js'
import { machine, resultsDir, versions } from '../models/cases.js'
import { packageDir } from './memory-cases.js'

const { values } = parseArgs({ options: { file: { type: 'string' }, rounds: { type: 'string', default: '6' }, mib: { type: 'string', default: '256' }, io: { type: 'string', default: 'auto' } } })
const fallback = existsSync(packageDir) ? readdirSync(packageDir).find((f) => f.startsWith('resnet152-') && f.endsWith('.fpk')) : undefined
const file = values.file ?? (fallback === undefined ? undefined : join(packageDir, fallback))
if (file === undefined) throw new Error(`no --file given and no ResNet-152 package in ${packageDir}: run npm run bench:memory -- --models resnet152 first`)
const rounds = Number(values.rounds)
const io = values.io as 'auto' | 'uring' | 'pread'
const total = Math.min(statSync(file).size, Number(values.mib) * 2 ** 20) - (Math.min(statSync(file).size, Number(values.mib) * 2 ** 20) % 4096)
const window = 32 << 20
const piece = 4 << 20
const ranges: number[] = []
for (let at = 0; at < total; at += piece) ranges.push(at, Math.min(piece, total - at), at % window)

const KiB = 1024
/** [chunkBytes, queueDepth]; the first is the reader's default. */
const geometries: Array<[number, number]> = [
  [256 * KiB, 8],
  [1024 * KiB, 16],
  [1024 * KiB, 4],
  [1024 * KiB, 2],
  [512 * KiB, 4],
  [256 * KiB, 16],
  [128 * KiB, 16],
  [4096 * KiB, 2],
]
const label = ([c, d]: [number, number]): string => `${c / KiB} KiB x ${d}`

const session = new (binding().Session)(1, io)
session.resize(window, 0)
const gbps = new Map<string, number[]>()
const ratio = new Map<string, number[]>()
let direct = true
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? geometries : geometries.slice().reverse()
  const round = new Map<string, number>()
  for (const g of order) {
    const res = await session.readFile(file, new Float64Array(ranges), { direct: true, chunkBytes: g[0], queueDepth: g[1] })
    direct &&= res.direct
    round.set(label(g), total / (res.ms / 1e3) / 1e9)
  }
  const base = round.get(label(geometries[0]!))!
  for (const [k, v] of round) {
    gbps.set(k, [...(gbps.get(k) ?? []), v])
    ratio.set(k, [...(ratio.get(k) ?? []), v / base])
  }
}
const reader = session.stats().reader
session.dispose()

const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const rows = geometries.map((g) => {
  const k = label(g)
  return { geometry: k, chunkBytes: g[0], queueDepth: g[1], medianGBps: Number(median(gbps.get(k)!).toFixed(3)), ratioToDefault: Number(median(ratio.get(k)!).toFixed(3)), gbps: gbps.get(k)!.map((x) => Number(x.toFixed(3))) }
})
console.log(`${file}: ${(total / 2 ** 20).toFixed(0)} MiB as ${ranges.length / 3} ranges of 4 MiB, O_DIRECT ${direct}, reader ${reader}, ${rounds} rounds (alternating order)`)
console.log('| geometry | median GB/s | ratio to 256 KiB x 8 (median per round) |\n|---|---:|---:|')
for (const r of rows) console.log(`| ${r.geometry} | ${r.medianGBps.toFixed(2)} | ${r.ratioToDefault.toFixed(3)} |`)
mkdirSync(resultsDir, { recursive: true })
const out = join(resultsDir, 'read-geometry.json')
writeFileSync(out, JSON.stringify({ benchmark: 'read-geometry', date: new Date().toISOString(), machine: machine(), ...versions(), file, bytes: total, direct, reader, rounds, rows }, null, 1) + '\n')
console.log(`wrote ${out}`)
