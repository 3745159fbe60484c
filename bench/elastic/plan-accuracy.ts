// SPDX-License-Identifier: Apache-2.0
// Dev accuracy of a plan: its sub-model with its shard bitwidths, every shard resident (accuracy does
// not depend on IO or on which shards are preloaded). Cached by (depth, width, bits), in memory and in
// .cache/bench-elastic/<package>.accuracy.json under the package digest, sequence length and dev size.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { accuracy, residentPlan, type DevExample } from '../../lib/prepare/shard-importance.js'
import { ElasticRunner } from '../../lib/runtime/elastic-runner.js'
import type { BenchPackage } from './bench-package.js'
import type { PlanSummary } from './configs.js'
import { devInputs } from './dev-inputs.js'

type Shape = Pick<PlanSummary, 'depth' | 'width' | 'bits'>

export const planKey = (p: Shape): string => `${p.depth}x${p.width}:${p.bits.map((row) => row.join(',')).join('/')}`

export class PlanAccuracy {
  private readonly file: string
  private readonly scope: string
  private readonly cache: Record<string, Record<string, number>>
  evaluated = 0

  private constructor(
    private readonly x: ElasticRunner,
    private readonly dev: readonly DevExample[],
    private readonly seq: number,
    bp: BenchPackage,
  ) {
    this.file = bp.path.replace(/\.fpk$/, '.accuracy.json')
    this.scope = `${bp.pkg.digest}:seq${seq}:dev${dev.length}`
    this.cache = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as typeof this.cache) : {}
  }

  static async open(bp: BenchPackage, seq: number, threads: number, devLimit: number | undefined): Promise<PlanAccuracy> {
    const dev = await devInputs(bp.pkg, bp.dev, seq, devLimit)
    const x = await ElasticRunner.open(bp.path, bp.pkg.config, bp.pkg.blobs, { threads, io: 'auto' })
    return new PlanAccuracy(x, dev, seq, bp)
  }

  get devCount(): number {
    return this.dev.length
  }

  async of(plan: Shape): Promise<number> {
    const key = planKey(plan)
    const known = this.cache[this.scope]?.[key]
    if (known !== undefined) return known
    const acc = await accuracy(this.x, residentPlan(plan.depth, plan.width, this.seq, plan.bits), this.dev)
    this.evaluated++
    this.cache[this.scope] = { ...this.cache[this.scope], [key]: acc }
    writeFileSync(this.file, `${JSON.stringify(this.cache, null, 1)}\n`)
    return acc
  }

  /** The whole model with fp32 shards (the reference every plan is compared with). */
  full(): Promise<number> {
    const { layers, heads } = this.x.config
    return this.of({ depth: layers, width: heads, bits: Array.from({ length: layers }, () => new Array<number>(heads).fill(32)) })
  }

  dispose(): void {
    this.x.dispose()
  }
}
