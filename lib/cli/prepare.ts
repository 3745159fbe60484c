// SPDX-License-Identifier: Apache-2.0
// `flexpipe prepare model.onnx -o model.fpk [--budget 100MB] [--dim name=N | name=min..max]...`: plan and write a package,
// with a progress bar over the weight transforms (cli-progress) when stderr is a terminal.
import { availableParallelism } from 'node:os'
import cliProgress from 'cli-progress'
import { ArgumentError } from '../errors.js'
import { prepare } from '../prepare/prepare.js'
import { reprofilePackage } from '../prepare/measure-budget-device.js'
import { formatMB, parseBytes } from './sizes.js'

export interface PrepareCliOptions {
  readonly output?: string
  readonly budget?: string
  readonly dims: string[]
  readonly threads?: number
  readonly kernels?: string
}

/** `--dim name=N` fixes a dim; `--dim name=lo..hi` keeps it symbolic over a range (planned at hi). */
function parseDims(dims: string[]): Record<string, number | [number, number]> {
  const out: Record<string, number | [number, number]> = {}
  for (const d of dims) {
    const [k, v] = d.split('=')
    const range = v === undefined ? null : /^(\d+)\.\.(\d+)$/.exec(v)
    if (k && range !== null) {
      out[k] = [Number(range[1]), Number(range[2])]
      continue
    }
    const n = Number(v)
    if (!k || !Number.isSafeInteger(n) || n < 1) throw new ArgumentError(`--dim: expected name=N or name=min..max with N, min, max >= 1, got '${d}'`)
    out[k] = n
  }
  return out
}

export async function runPrepare(model: string, options: PrepareCliOptions): Promise<void> {
  if (options.output === undefined) throw new ArgumentError('prepare: give the package path with -o model.fpk')
  if (!options.output.endsWith('.fpk')) throw new ArgumentError(`prepare: the package path must end in .fpk, got ${options.output}`)
  const kernels = options.kernels ?? 'auto'
  if (kernels !== 'auto' && kernels !== 'direct') throw new ArgumentError(`--kernels: expected auto or direct, got ${kernels}`)
  const bar = new cliProgress.SingleBar(
    { format: 'prepare |{bar}| {value}/{total} weights  {what}', stream: process.stderr, hideCursor: true, noTTYOutput: false, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  )
  let started = false
  try {
    const report = await prepare(model, options.output, {
      ...(options.budget === undefined ? {} : { budget: parseBytes(options.budget, '--budget') }),
      dims: parseDims(options.dims),
      kernels,
      ...(options.threads === undefined ? {} : { threads: options.threads }),
      onProgress: (done, total, what) => {
        if (!started) {
          bar.start(total, 0, { what })
          started = true
        }
        bar.update(done, { what: what.length > 40 ? `…${what.slice(-39)}` : what })
      },
    })
    bar.stop()
    console.log(
      `${options.output}: ${report.blobs} weight blobs, ${formatMB(report.packageBytes)}; ${report.layers} layers` +
        (options.budget === undefined ? '' : `, ${report.slicedLayers} sliced or re-kerneled at ${options.budget}`) +
        `; runs in ${formatMB(report.minimumBudget)} .. ${formatMB(report.unlimitedBudget)} (every weight resident); ${(report.ms / 1000).toFixed(1)} s`,
    )
  } finally {
    if (started) bar.stop()
  }
}

/** `flexpipe profile model.fpk`: re-measures a model package's kernel times and cold read bandwidth here. */
export async function runProfileModel(path: string, threads: number | undefined): Promise<void> {
  const n = threads ?? Math.min(availableParallelism(), 4)
  const p = await reprofilePackage(path, n)
  const layers = Object.keys(p.layers).length
  const total = Object.values(p.layers).reduce((a, k) => a + Math.min(...Object.values(k)), 0)
  console.log(
    `${path}: profiled ${layers} layers on ${n} threads (fastest kernels sum to ${total.toFixed(1)} ms); ` +
      `cold read bandwidth ${formatMB(p.readBandwidth)}/s (${p.direct ? 'O_DIRECT' : 'buffered'})`,
  )
}

