// SPDX-License-Identifier: Apache-2.0
// `flexpipe run`: open a model, feed it, print a summary of every output and the latency.
import { writeFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { ArgumentError } from '../errors.js'
import { modelKind, open, openElastic, openPackage } from '../api/open.js'
import type { Tensor } from '../model/tensor.js'
import type { AutoBudgetStats } from '../runtime/budget-follower.js'
import { buildFeeds } from './inputs.js'
import { formatMB } from './sizes.js'

export interface RunOptions {
  readonly inputs: string[]
  readonly dims: string[]
  readonly random: boolean
  readonly threads?: number
  readonly repeat: number
  readonly output?: string
  /** Memory budget in bytes, or 'auto': follow the machine's memory limit (packages only). */
  readonly budget?: number | 'auto'
  /** Read bandwidth throttle in bytes/s (packages only). */
  readonly bandwidth?: number
}

function summary(t: Tensor): string {
  const values = Array.from(t.data as ArrayLike<number | bigint>, Number)
  const head = values.slice(0, 6).map((v) => (Number.isInteger(v) ? String(v) : v.toFixed(5)))
  let argmax = 0
  values.forEach((v, i) => v > values[argmax]! && (argmax = i))
  return `${t.dtype} [${t.dims.join(', ')}]  first: ${head.join(' ')}${values.length > 6 ? ' ...' : ''}  argmax: ${argmax}`
}

/** Where an automatic budget came from: ` (auto: cgroup1 limit 512.0 MB)`. */
function autoNote(a: AutoBudgetStats | undefined): string {
  if (a === undefined) return ''
  const limit = a.limitBytes === undefined ? (a.availableBytes === undefined ? '' : ` available ${formatMB(a.availableBytes)}`) : ` limit ${formatMB(a.limitBytes)}`
  return ` (auto: ${a.source}${limit}${a.status === 'infeasible' ? ', below the minimum' : ''})`
}

export async function runModel(model: string, options: RunOptions): Promise<void> {
  if (!Number.isInteger(options.repeat) || options.repeat < 1) throw new ArgumentError(`--repeat: expected a positive integer`)
  const kind = await modelKind(model)
  if (kind === 'onnx' && (options.budget !== undefined || options.bandwidth !== undefined)) {
    throw new ArgumentError(`--budget and --bandwidth need a package: run \`flexpipe prepare ${model} -o model.fpk\` first`)
  }
  if (kind === 'elastic' && options.budget !== undefined) throw new ArgumentError(`--budget: ${model} is an elastic package; it runs its full model here (flexpipe classify runs it to a target latency)`)
  const engine =
    kind === 'budget'
      ? await openPackage(model, { threads: options.threads, memoryBudget: options.budget, ioBandwidth: options.bandwidth })
      : kind === 'elastic'
        ? await openElastic(model, { threads: options.threads, bandwidth: options.bandwidth })
        : await open(model, { threads: options.threads })
  try {
    const feeds = await buildFeeds(engine, options.inputs, options.random, options.dims)
    const times: number[] = []
    let outputs: Record<string, Tensor> = {}
    for (let i = 0; i < options.repeat; i++) {
      const t0 = performance.now()
      outputs = await engine.infer(feeds)
      times.push(performance.now() - t0)
    }
    for (const [name, t] of Object.entries(outputs)) console.log(`${name}: ${summary(t)}`)
    const sorted = times.slice().sort((a, b) => a - b)
    const st = engine.stats()
    const budget = 'memoryBudget' in st ? `; budget ${formatMB(st.memoryBudget)}${autoNote(st.auto)}, ${formatMB(st.loadBytesPerInference)} loaded per inference` : ''
    console.log(`latency: first ${times[0]!.toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms over ${times.length} run(s); threads ${st.threads}; arena ${(st.arenaBytes / 1e6).toFixed(1)} MB${budget}`)
    if (options.output) {
      const json = Object.fromEntries(Object.entries(outputs).map(([k, t]) => [k, { dtype: t.dtype, dims: t.dims, data: Array.from(t.data as ArrayLike<number | bigint>, Number) }]))
      await writeFile(options.output, JSON.stringify(json))
    }
  } finally {
    await engine.close()
  }
}
