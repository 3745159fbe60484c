// SPDX-License-Identifier: Apache-2.0
// What the server counts and how /metrics shows it: the Prometheus text format (version 0.0.4), so any
// scraper reads it. Latency quantiles come from a window of the most recent requests, not from the
// server's whole life, so they follow the load as it changes.
import { readFileSync } from 'node:fs'

/** The most recent `size` values; quantiles over them. */
export class LatencyWindow {
  private readonly values: number[] = []
  private next = 0
  count = 0
  sum = 0

  constructor(private readonly size = 4096) {}

  add(seconds: number): void {
    this.count++
    this.sum += seconds
    if (this.values.length < this.size) this.values.push(seconds)
    else this.values[this.next] = seconds
    this.next = (this.next + 1) % this.size
  }

  /** The q-quantile (nearest rank) of the window, or NaN when it is empty. */
  quantile(q: number): number {
    if (this.values.length === 0) return Number.NaN
    const s = [...this.values].sort((a, b) => a - b)
    return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!
  }
}

/** Per model: responses by status code, end-to-end and inference latency. */
export class ModelMetrics {
  readonly responses = new Map<number, number>()
  readonly requestSeconds = new LatencyWindow()
  readonly inferenceSeconds = new LatencyWindow()

  countResponse(status: number): void {
    this.responses.set(status, (this.responses.get(status) ?? 0) + 1)
  }
}

/** The gauges of one model's queue and engine at scrape time. */
export interface ModelGauges {
  readonly name: string
  readonly engine: string
  readonly queueDepth: number
  readonly queueDepthMax: number
  readonly queueLimit: number
  readonly inflight: number
  readonly memoryBudgetBytes?: number
  readonly arenaBytes?: number
  readonly metrics: ModelMetrics
}

/** This process's resident set and its peak (VmRSS, VmHWM) in bytes; zeros where /proc is absent. */
export function residentMemory(): { rss: number; peak: number } {
  let status: string
  try {
    status = readFileSync('/proc/self/status', 'latin1')
  } catch {
    return { rss: process.memoryUsage.rss(), peak: 0 }
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

const quantiles = [0.5, 0.9, 0.99]

function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function num(v: number): string {
  return Number.isNaN(v) ? 'NaN' : String(v)
}

/** The Prometheus text exposition of every model and of the process. */
export function renderMetrics(models: readonly ModelGauges[], server: { rssBeforeModels: number; draining: boolean }): string {
  const out: string[] = []
  const family = (name: string, type: 'gauge' | 'counter' | 'summary', help: string, lines: string[]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines)
  }
  const each = (f: (m: ModelGauges, l: string) => string | string[] | undefined) =>
    models.flatMap((m) => {
      const r = f(m, `model="${label(m.name)}",engine="${label(m.engine)}"`)
      return r === undefined ? [] : Array.isArray(r) ? r : [r]
    })
  family('flexpipe_queue_depth', 'gauge', 'Requests waiting for the model\'s engine.', each((m, l) => `flexpipe_queue_depth{${l}} ${m.queueDepth}`))
  family('flexpipe_queue_depth_max', 'gauge', 'The deepest the queue has been since the server started.', each((m, l) => `flexpipe_queue_depth_max{${l}} ${m.queueDepthMax}`))
  family('flexpipe_queue_limit', 'gauge', 'Requests that may wait; more are refused with 429.', each((m, l) => `flexpipe_queue_limit{${l}} ${m.queueLimit}`))
  family('flexpipe_inflight', 'gauge', 'Inferences running now.', each((m, l) => `flexpipe_inflight{${l}} ${m.inflight}`))
  family(
    'flexpipe_responses_total',
    'counter',
    'Inference responses by HTTP status.',
    each((m, l) => [...m.metrics.responses].sort(([a], [b]) => a - b).map(([code, n]) => `flexpipe_responses_total{${l},code="${code}"} ${n}`)),
  )
  for (const [name, help, pick] of [
    ['flexpipe_request_duration_seconds', 'Admitted requests from arrival to response (queue wait included); quantiles of the last 4096.', (m: ModelMetrics) => m.requestSeconds],
    ['flexpipe_inference_duration_seconds', 'Engine time per inference; quantiles of the last 4096.', (m: ModelMetrics) => m.inferenceSeconds],
  ] as const) {
    family(
      name,
      'summary',
      help,
      each((m, l) => {
        const w = pick(m.metrics)
        return [...quantiles.map((q) => `${name}{${l},quantile="${q}"} ${num(w.quantile(q))}`), `${name}_sum{${l}} ${w.sum}`, `${name}_count{${l}} ${w.count}`]
      }),
    )
  }
  family('flexpipe_memory_budget_bytes', 'gauge', 'The memory budget the engine plans within (memory-budget packages only).', each((m, l) => (m.memoryBudgetBytes === undefined ? undefined : `flexpipe_memory_budget_bytes{${l}} ${m.memoryBudgetBytes}`)))
  family('flexpipe_arena_bytes', 'gauge', 'The engine\'s arena (flexpipe engines only).', each((m, l) => (m.arenaBytes === undefined ? undefined : `flexpipe_arena_bytes{${l}} ${m.arenaBytes}`)))
  const mem = residentMemory()
  family('process_resident_memory_bytes', 'gauge', 'Resident set size (VmRSS).', [`process_resident_memory_bytes ${mem.rss}`])
  family('process_resident_memory_peak_bytes', 'gauge', 'Peak resident set size (VmHWM).', [`process_resident_memory_peak_bytes ${mem.peak}`])
  const heap = process.memoryUsage()
  family('nodejs_heap_size_total_bytes', 'gauge', 'V8 heap reserved (part of the RSS that is not the engine).', [`nodejs_heap_size_total_bytes ${heap.heapTotal}`])
  family('nodejs_external_memory_bytes', 'gauge', 'Memory of Buffers and other objects outside the V8 heap (request bodies among them).', [`nodejs_external_memory_bytes ${heap.external}`])
  family('flexpipe_rss_before_models_bytes', 'gauge', 'Resident set size before any model was opened: subtract it to see what the models cost.', [`flexpipe_rss_before_models_bytes ${server.rssBeforeModels}`])
  family('flexpipe_draining', 'gauge', '1 while the server shuts down (finishing admitted requests, refusing new ones).', [`flexpipe_draining ${server.draining ? 1 : 0}`])
  return out.join('\n') + '\n'
}

/** Parses the Prometheus text format's samples into name{labels} → value (for tests and the load test). */
export function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    samples.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return samples
}
