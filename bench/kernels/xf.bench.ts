// SPDX-License-Identifier: Apache-2.0
// Transformer and element-wise kernels (issue 3): fused Attention GFLOP/s at BERT-base shapes, and
// LayerNorm / Softmax / GELU / CNN element-wise throughput, per ISA (ref vs the SIMD table) at 1 and 2
// threads, through the native ops (binding.runOp: the op's checks and thread split included).
//
//   npm run bench:kernels                  (after the GEMM benchmark)
//   node dist/bench/kernels/xf.bench.js [--runs 40] [--threads 1,2] [--only attention]
//
// Each ISA runs in its own child process (FLEXPIPE_ISA=<isa> caps the kernel table once per process).
// Per case: 5 warm-up calls, then the median (p50) of --runs timed calls (default 40). GB/s counts the
// bytes an op must move (inputs read + outputs written once); attention counts 4·S²·dh flops per head
// (QKᵀ and P·V; causal: half). Prints a table and one JSON line per case; writes
// bench/results/kernels-xf.json. Timing never fails the run.
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { binding, type NativeTensor } from '../../lib/native/binding.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? fallback
}

interface Row {
  kernel: string
  isa: string
  shape: string
  threads: number
  p50_ms: number
  gflops?: number
  gbps?: number
  ns_per_elem?: number
  cpu: string
}

interface Case {
  kernel: string
  shape: string
  elems: number
  bytes: number
  flops?: number
  run: (threads: number) => void
}

const f32 = (dims: number[], data?: Float32Array): NativeTensor => ({
  dtype: 1,
  dims,
  data: data ?? Float32Array.from({ length: dims.reduce((p, d) => p * d, 1) }, (_, i) => Math.sin(i * 0.37) * 3),
})

function cases(): Case[] {
  const b = binding()
  const op = (name: string, ins: Array<NativeTensor | null>, outs: NativeTensor[], ints: number[], floats: number[] = []) =>
    (threads: number) => b.runOp(name, ins, outs, ints, floats, threads)
  const out: Case[] = []
  // attention: BERT-base, seq 128, 12 heads of 64; the op's workspace for up to 8 threads
  const S = 128
  const H = 12
  const dh = 64
  const testing = b._testing as unknown as { xfAttentionWorkspaceFloats(seqKv: number, dh: number): number }
  const wsFloats = testing.xfAttentionWorkspaceFloats(S, dh)
  const ws: NativeTensor = { dtype: 2, dims: [8 * 4 * wsFloats], data: new Uint8Array(8 * 4 * wsFloats) }
  const qkv = [f32([S, H * dh]), f32([S, H * dh]), f32([S, H * dh])]
  const keyMask = f32([S], new Float32Array(S).fill(0).map((_, j) => (j >= 120 ? -10000 : 0)))
  for (const [name, causal, heads, mask] of [
    ['attention', 0, [] as number[], null],
    ['attention+keymask', 0, [], keyMask],
    ['attention causal', 1, [], null],
    ['attention 4 of 12 heads', 0, [0, 5, 7, 11], null],
  ] as const) {
    const n = heads.length || H
    out.push({
      kernel: name,
      shape: `S=${S} H=${H} dh=${dh}${heads.length ? ` heads=${heads.join(',')}` : ''}`,
      elems: S * n * dh,
      bytes: 4 * S * H * dh * 4,
      flops: 4 * S * S * dh * n * (causal ? 0.5 : 1),
      run: op('Attention', mask ? [...qkv, mask] : qkv, [f32([S, H * dh]), ws], [H, causal, ...heads]),
    })
  }
  const x = f32([S, 768])
  out.push({ kernel: 'layernorm', shape: '128x768', elems: S * 768, bytes: 8 * S * 768, run: op('LayerNormalization', [x, f32([768]), f32([768])], [f32([S, 768])], [1], [1e-5]) })
  const probs = f32([H * S, S])
  out.push({ kernel: 'softmax', shape: '1536x128', elems: H * S * S, bytes: 8 * H * S * S, run: op('Softmax', [probs], [f32([H * S, S])], [1, 0]) })
  const ffn = f32([S, 3072])
  out.push({ kernel: 'gelu (erf)', shape: '128x3072', elems: S * 3072, bytes: 8 * S * 3072, run: op('Unary', [ffn], [f32([S, 3072])], [35]) })
  out.push({ kernel: 'gelu (tanh)', shape: '128x3072', elems: S * 3072, bytes: 8 * S * 3072, run: op('Unary', [ffn], [f32([S, 3072])], [36]) })
  // CNN element-wise: a ResNet/MobileNet stage activation [1, 64, 56, 56]
  const act = [1, 64, 56, 56]
  const n = 64 * 56 * 56
  const a = f32(act)
  const y = f32(act)
  out.push({ kernel: 'add', shape: '1x64x56x56 + same', elems: n, bytes: 12 * n, run: op('Binary', [a, f32(act)], [y], [0]) })
  out.push({ kernel: 'add per-channel', shape: '1x64x56x56 + 1x64x1x1', elems: n, bytes: 8 * n, run: op('Binary', [a, f32([1, 64, 1, 1])], [y], [0]) })
  out.push({ kernel: 'mul scalar', shape: '1x64x56x56 * []', elems: n, bytes: 8 * n, run: op('Binary', [a, f32([])], [y], [2]) })
  for (const [name, code] of [['relu', 1], ['sigmoid', 2], ['swish', 40], ['tanh', 3], ['hardswish', 29], ['exp', 4], ['erf', 7], ['sqrt', 6]] as const) {
    out.push({ kernel: name, shape: '1x64x56x56', elems: n, bytes: 8 * n, run: op('Unary', [a], [y], [code]) })
  }
  out.push({ kernel: 'clip', shape: '1x64x56x56', elems: n, bytes: 8 * n, run: op('Clip', [a], [y], [1, 1, 0, 0], [0, 6]) })
  return out
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q)
  return s[Math.floor(s.length / 2)]!
}

/** Child: time every case on this process's ISA, print one JSON row per line. */
function child(): void {
  const runs = Number(option('runs', '40'))
  const threads = option('threads', '1,2').split(',').map(Number)
  const only = option('only', '')
  const isa = binding().info().isa
  const cpu = cpus()[0]?.model ?? 'unknown'
  for (const c of cases().filter((c) => c.kernel.includes(only))) {
    for (const th of threads) {
      for (let i = 0; i < 5; i++) c.run(th)
      const times: number[] = []
      for (let i = 0; i < runs; i++) {
        const t0 = process.hrtime.bigint()
        c.run(th)
        times.push(Number(process.hrtime.bigint() - t0) / 1e6)
      }
      const p50 = median(times)
      const row: Row = { kernel: c.kernel, isa, shape: c.shape, threads: th, p50_ms: +p50.toFixed(4), cpu }
      if (c.flops) row.gflops = +(c.flops / p50 / 1e6).toFixed(2)
      else {
        row.gbps = +(c.bytes / p50 / 1e6).toFixed(2)
        row.ns_per_elem = +((p50 * 1e6) / c.elems).toFixed(3)
      }
      console.log(JSON.stringify(row))
    }
  }
}

function parent(): void {
  const rows: Row[] = []
  const isas = [...new Set(['ref', binding().info().isa])]
  for (const isa of isas) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', ...process.argv.slice(2)], {
      env: { ...process.env, FLEXPIPE_ISA: isa },
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    })
    if (r.status !== 0) throw new Error(`xf bench child (${isa}) failed: ${r.stderr}`)
    for (const line of r.stdout.split('\n')) if (line.startsWith('{')) rows.push(JSON.parse(line) as Row)
  }
  for (const row of rows) console.log(JSON.stringify(row))
  const key = (r: Row): string => `${r.kernel}|${r.shape}|${r.threads}`
  const refOf = new Map(rows.filter((r) => r.isa === 'ref').map((r) => [key(r), r]))
  console.log(`\n| kernel | shape | threads | isa | p50 ms | GFLOP/s | GB/s | ns/elem | speed-up vs ref |`)
  console.log(`|---|---|---|---|---|---|---|---|---|`)
  for (const r of rows.filter((r) => r.isa !== 'ref' || isas.length === 1)) {
    const ref = refOf.get(key(r))
    const up = ref ? (ref.p50_ms / r.p50_ms).toFixed(1) + 'x' : ''
    console.log(`| ${r.kernel} | ${r.shape} | ${r.threads} | ${r.isa} | ${r.p50_ms} | ${r.gflops ?? ''} | ${r.gbps ?? ''} | ${r.ns_per_elem ?? ''} | ${up} |`)
  }
  const machine = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, loadavg: loadavg(), node: process.version, date: new Date().toISOString() }
  const out = join(repoRoot, 'bench', 'results', 'kernels-xf.json')
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, JSON.stringify({ machine, rows }, null, 2) + '\n')
  console.log(`\nwrote ${out}`)
}

if (process.argv.includes('--child')) child()
else parent()
