// SPDX-License-Identifier: Apache-2.0
// Builds feeds for `flexpipe run` from --input name=file (JSON or PPM) and --random with --dim.
import { readFile } from 'node:fs/promises'
import { ArgumentError } from '../errors.js'
import { allocArray, isDType } from '../model/dtype.js'
import { tensor, type Tensor, type TensorInfo } from '../model/tensor.js'
import { imageTensor, readPpm } from './image.js'

/** What feeding needs of an engine: its inputs. */
type Engine = { readonly inputs: readonly TensorInfo[] }

/** Deterministic pseudo-random numbers (mulberry32), so runs are repeatable. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function fromFile(path: string): Promise<Tensor> {
  if (path.endsWith('.ppm')) return imageTensor(await readPpm(path))
  const json = JSON.parse(await readFile(path, 'utf8')) as { dtype?: string; dims?: number[]; data?: number[] }
  const dtype = json.dtype ?? 'float32'
  if (!isDType(dtype) || !Array.isArray(json.dims) || !Array.isArray(json.data)) {
    throw new ArgumentError(`${path}: expected JSON {"dtype": "float32", "dims": [...], "data": [...]}`)
  }
  const data = allocArray(dtype, json.data.length)
  json.data.forEach((x, i) => ((data as unknown as (number | bigint)[])[i] = data instanceof BigInt64Array ? BigInt(x) : x))
  return tensor(dtype, json.dims, data)
}

function randomTensor(name: string, engine: Engine, dims: Map<string, number>, rand: () => number): Tensor {
  const info = engine.inputs.find((i) => i.name === name)!
  const shape = (info.dims ?? []).map((d) => {
    if (typeof d === 'number') return d
    const v = dims.get(d)
    if (v === undefined) throw new ArgumentError(`input '${name}' has symbolic dim '${d}': give it with --dim ${d}=N`)
    return v
  })
  const t = tensor(info.dtype, shape)
  const data = t.data as unknown as (number | bigint)[]
  for (let i = 0; i < data.length; i++) {
    if (t.data instanceof BigInt64Array) data[i] = BigInt(Math.floor(rand() * 100))
    else if (info.dtype === 'bool') data[i] = rand() < 0.5 ? 0 : 1
    else if (info.dtype === 'float32' || info.dtype === 'float64') data[i] = rand() * 2 - 1
    else data[i] = Math.floor(rand() * 100)
  }
  return t
}

export async function buildFeeds(engine: Engine, inputs: string[], random: boolean, dimArgs: string[]): Promise<Record<string, Tensor>> {
  const feeds: Record<string, Tensor> = {}
  for (const arg of inputs) {
    const eq = arg.indexOf('=')
    if (eq <= 0) throw new ArgumentError(`--input: expected name=file, got '${arg}'`)
    feeds[arg.slice(0, eq)] = await fromFile(arg.slice(eq + 1))
  }
  const dims = new Map<string, number>()
  for (const arg of dimArgs) {
    const [k, v] = arg.split('=')
    if (!k || !v || !/^\d+$/.test(v)) throw new ArgumentError(`--dim: expected name=N, got '${arg}'`)
    dims.set(k, Number(v))
  }
  const rand = seededRandom(42)
  for (const info of engine.inputs) {
    if (feeds[info.name] !== undefined) continue
    if (!random) throw new ArgumentError(`input '${info.name}' is not given: pass --input ${info.name}=file or --random`)
    feeds[info.name] = randomTensor(info.name, engine, dims, rand)
  }
  return feeds
}
