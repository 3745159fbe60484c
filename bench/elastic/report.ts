// SPDX-License-Identifier: Apache-2.0
// The elastic benchmark's tables (one per IO mode x T) and its acceptance checks, printed, never asserted.
import { flexpipeLabels, ioSettings, MiB, pipelineBaselines, type IoMode, type Measured, type Row } from './configs.js'
import type { Target } from './options.js'

const mb = (bytes: number | undefined): string => (bytes === undefined ? '-' : (bytes / MiB).toFixed(2))
const pct = (x: number | undefined): string => (x === undefined ? '-' : `${(100 * x).toFixed(2)}%`)
const verdict = (ok: boolean): string => (ok ? 'PASS' : 'MISS')
const measured = (r: Row | undefined): Measured | undefined => (r?.result.ok && r.result.feasible ? r.result : undefined)

export function histogram(h: Record<number, number>): string {
  return Object.entries(h)
    .filter(([, n]) => n > 0)
    .map(([b, n]) => `${b === '32' ? 'fp32' : `${b}b`}x${n}`)
    .join(' ')
}

export const targetLabel = (t: Target): string => `T=${t.name} ${t.ms.toFixed(1)} ms${t.factor === undefined ? '' : ` (${t.factor} F)`}`

function formatTable(head: string[], rows: string[][], right: boolean[]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const fmt = (r: string[]): string => `| ${r.map((x, i) => (right[i] ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join(' | ')} |`
  return [fmt(head), `|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...rows.map(fmt)]
}

function tableRow(r: Row): string[] {
  const m = r.result
  if (!m.ok || !m.feasible) {
    const why = m.ok ? `infeasible: the planner needs T >= ${m.minimumMs.toFixed(1)} ms` : `error: ${m.error}`
    return [r.config, why, '', '', '', '', '', '', '', '', '', '', '']
  }
  const p = m.openedPlan
  return [
    r.config,
    `${p.depth}x${p.width}`,
    histogram(p.bitsHistogram),
    mb(p.preloadBytes),
    mb(r.residentBytes),
    mb(m.peakBytes),
    p.modelledMs.toFixed(1),
    m.median.toFixed(1),
    m.p95.toFixed(1),
    `${(100 * m.within).toFixed(0)}%`,
    pct(r.accuracy),
    String(m.replans),
    `${m.plan.depth}x${m.plan.width} ${pct(r.finalAccuracy)}`,
  ]
}

/** One table per IO mode x T. */
export function tables(rows: readonly Row[], io: readonly IoMode[], targets: readonly Target[]): string[] {
  const head = ['config', 'sub-model', 'shard bits', 'preload MB', 'resident MB', 'peak MB', 'model ms', 'median ms', 'p95 ms', '<=1.05T', 'dev acc', 're-plans', 'final (acc)']
  const right = [false, false, false, true, true, true, true, true, true, true, true, true, false]
  const out: string[] = []
  for (const mode of io) {
    for (const t of targets) {
      out.push('', `${ioSettings[mode].describe}; ${targetLabel(t)}, 1.05 T = ${(1.05 * t.ms).toFixed(1)} ms`)
      out.push(...formatTable(head, rows.filter((r) => r.io === mode && r.target === t.name).map(tableRow), right))
    }
  }
  return out
}

function accuracyChecks(rows: readonly Row[], io: readonly IoMode[], targets: readonly Target[]): string[] {
  const out = ['flexpipe accuracy >= Load&Exec, StdPL-full, StdPL-2bit, StdPL-6bit at every T (an infeasible baseline has no answer within T and counts as beaten):']
  for (const mode of io) {
    for (const t of targets) {
      const at = (label: string): Row | undefined => rows.find((r) => r.io === mode && r.target === t.name && r.config === label)
      for (const f of flexpipeLabels) {
        const mine = at(f)?.accuracy
        if (mine === undefined) {
          out.push(`  ${mode} ${targetLabel(t)}: ${f}: no plan (${at(f)?.result.ok ? 'infeasible' : 'error'}): MISS`)
          continue
        }
        const vs = pipelineBaselines.map((b) => {
          const r = at(b)
          const acc = r?.accuracy
          const ok = acc === undefined ? r?.result.ok === true : mine >= acc
          return { ok, text: `${b} ${acc === undefined ? (r?.result.ok ? 'infeasible' : 'not measured') : pct(acc)}` }
        })
        out.push(`  ${mode} ${targetLabel(t)}: ${f} ${pct(mine)} vs ${vs.map((v) => v.text).join(', ')}: ${verdict(vs.every((v) => v.ok))}`)
      }
    }
  }
  return out
}

function preloadModelChecks(rows: readonly Row[], io: readonly IoMode[], loose: Target): string[] {
  const out = [
    `at ${targetLabel(loose)}: flexpipe within 1 pp of PreloadModel-full while holding <= 1/20 of its memory resident.`,
    '  Counted: "shards" = shard bytes kept between calls (flexpipe: its preload buffer; PreloadModel-full: every',
    '  shard of the N x M model in fp32); "parameters" = shards + the non-shard parameters every configuration keeps',
    '  resident in float32 (embeddings, LayerNorms, biases, pooler, classifier). MB = 2^20 bytes.',
  ]
  for (const mode of io) {
    const at = (label: string): Row | undefined => rows.find((r) => r.io === mode && r.target === loose.name && r.config === label)
    const pm = at('PreloadModel-full')
    const pmm = measured(pm)
    if (pmm === undefined || pm?.accuracy === undefined) {
      out.push(`  ${mode}: PreloadModel-full has no plan at this T: not measured`)
      continue
    }
    const pmShards = pmm.openedPlan.preloadBytes
    out.push(`  ${mode}: PreloadModel-full ${pct(pm.accuracy)}, resident ${mb(pm.residentBytes)} MB = ${mb(pmm.residentParameterBytes)} MB non-shard parameters + ${mb(pmShards)} MB shards`)
    const meets: string[] = []
    for (const f of flexpipeLabels) {
      const r = at(f)
      const m = measured(r)
      if (m === undefined || r?.accuracy === undefined) {
        out.push(`    ${f}: no plan: MISS`)
        continue
      }
      const dpp = 100 * (r.accuracy - pm.accuracy)
      const shardRatio = m.openedPlan.preloadBytes / pmShards
      const paramRatio = r.residentBytes! / pm.residentBytes!
      const close = dpp >= -1
      out.push(
        `    ${f}: ${pct(r.accuracy)} (${dpp >= 0 ? '+' : ''}${dpp.toFixed(2)} pp, within 1 pp: ${verdict(close)}); ` +
          `shards ${mb(m.openedPlan.preloadBytes)} MB = ${shardRatio.toFixed(4)} of its (<= 0.05: ${verdict(shardRatio <= 0.05)}); ` +
          `parameters ${mb(r.residentBytes)} MB = ${paramRatio.toFixed(4)} of its (<= 0.05: ${verdict(paramRatio <= 0.05)})`,
      )
      if (close && shardRatio <= 0.05) meets.push(`${f}${paramRatio <= 0.05 ? ' (also by parameters)' : ''}`)
    }
    out.push(`    -> within 1 pp with <= 1/20 of the shards resident: ${meets.length > 0 ? meets.join(', ') : 'none'}`)
  }
  return out
}

function latencyChecks(rows: readonly Row[], io: readonly IoMode[], targets: readonly Target[]): string[] {
  const out = ['>= 95% of flexpipe inferences within 1.05 T (wall time of inferIds, cold IO as configured):']
  for (const mode of io) {
    for (const t of targets) {
      const parts = flexpipeLabels.map((f) => {
        const m = measured(rows.find((r) => r.io === mode && r.target === t.name && r.config === f))
        return m === undefined ? { ok: false, text: `${f} no plan` } : { ok: m.within >= 0.95, text: `${f} ${(100 * m.within).toFixed(0)}% (p95 ${m.p95.toFixed(1)} ms)` }
      })
      out.push(`  ${mode} ${targetLabel(t)}, 1.05 T = ${(1.05 * t.ms).toFixed(1)} ms: ${parts.map((p) => p.text).join(', ')}: ${verdict(parts.every((p) => p.ok))}`)
    }
  }
  return out
}

export function checks(rows: readonly Row[], io: readonly IoMode[], targets: readonly Target[], loose: Target | undefined, devCount: number): string[] {
  return [
    `Checks (printed, not asserted; dev set ${devCount} examples, 1 example = ${(100 / devCount).toFixed(2)} pp):`,
    ...accuracyChecks(rows, io, targets),
    ...(loose === undefined ? [] : preloadModelChecks(rows, io, loose)),
    ...latencyChecks(rows, io, targets),
  ]
}
