// SPDX-License-Identifier: Apache-2.0
// memoryBudget: 'auto' under a real cgroup: the test creates a memory cgroup (v2 where the memory
// controller is delegated, else v1), starts a Node process inside it that opens a package with
// memoryBudget 'auto' and infers on request, and lowers the cgroup's limit between two inferences: the
// next inference must run under a smaller budget that the new limit leaves, with another plan and the
// same outputs. Then a soft limit (v1 memory.soft_limit_in_bytes, v2 memory.high) below what the package
// can run in: the minimum plan, reported, not a crash. That one is soft because a hard limit so close to
// the usage leaves no room for re-planning (it allocates before the old arena goes): the kernel killed
// the child there when the machine was busy.
// Needs root and a writable memory cgroup; skipped with the reason otherwise. The cgroup is removed at
// the end.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { tensor, type BudgetStats } from '../../lib/index.js'
import { MemoryLimitReader } from '../../lib/runtime/memory-limit.js'
import { mlpPackage } from '../helpers/auto-budget.js'
import { checkOutputs, tempDir, threads } from '../helpers/budget.js'
import { repoRoot } from '../helpers/data.js'

const MiB = 2 ** 20
const files = {
  cgroup2: { limit: 'memory.max', soft: 'memory.high', usage: 'memory.current' },
  cgroup1: { limit: 'memory.limit_in_bytes', soft: 'memory.soft_limit_in_bytes', usage: 'memory.usage_in_bytes' },
}

/** Removes cgroup `dir` once the processes in it have gone (EBUSY until then). */
async function removeCgroup(dir: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      rmdirSync(dir)
      return
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || tries === 100) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

interface Cgroup {
  readonly kind: 'cgroup2' | 'cgroup1'
  readonly dir: string
  readonly limit: (bytes: number) => void
  readonly soft: (bytes: number) => void
  readonly usage: () => number
}

/**
 * A new memory cgroup beside this process's (under its cgroup, else under its parent: on v2 a cgroup
 * holding processes cannot hand the memory controller to children), or the reason there is none.
 */
function makeCgroup(t: Test): Cgroup | string {
  if (process.getuid?.() !== 0) return 'creating a cgroup needs root'
  const own = new MemoryLimitReader().cgroup
  if (own === undefined) return 'no memory cgroup (neither v2 with the memory controller nor v1) in /proc/self/mountinfo'
  const f = files[own.kind]
  const reasons: string[] = []
  for (const parent of [own.dir, join(own.dir, '..')]) {
    const dir = join(parent, `flexpipe-auto-${process.pid}`)
    try {
      mkdirSync(dir)
    } catch (err) {
      reasons.push(`${dir}: ${(err as NodeJS.ErrnoException).code}`)
      continue
    }
    t.teardown(() => removeCgroup(dir))
    if (!existsSync(join(dir, f.limit))) {
      reasons.push(`${dir} has no ${f.limit} (the memory controller is not delegated there)`)
      continue
    }
    return {
      kind: own.kind,
      dir,
      limit: (bytes) => writeFileSync(join(dir, f.limit), String(bytes)),
      soft: (bytes) => writeFileSync(join(dir, f.soft), String(bytes)),
      usage: () => Number(readFileSync(join(dir, f.usage), 'utf8')),
    }
  }
  return `no writable memory cgroup: ${reasons.join('; ')}`
}

interface Reply {
  readonly stats: BudgetStats
  readonly y: number[]
}

/** A Node process started inside `cg` (its pid written to cgroup.procs before Node starts) that opens `pkg` with memoryBudget 'auto'. */
function startChild(t: Test, cg: Cgroup, pkg: string, x: Float32Array) {
  const dir = tempDir(t, 'flexpipe-auto-child-')
  const script = join(dir, 'child.mjs')
  writeFileSync(join(dir, 'x.json'), JSON.stringify(Array.from(x)))
  writeFileSync(
    script,
    `import { readFileSync } from 'node:fs'
    import { createInterface } from 'node:readline'
    import { openPackage, tensor } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)}
    const x = tensor('float32', [1, 512], Float32Array.from(JSON.parse(readFileSync(${JSON.stringify(join(dir, 'x.json'))}, 'utf8'))))
    const engine = await openPackage(${JSON.stringify(pkg)}, { threads: ${threads}, memoryBudget: 'auto' })
    for await (const line of createInterface({ input: process.stdin })) {
      if (line !== 'infer') break
      const out = await engine.infer({ x })
      console.log(JSON.stringify({ stats: engine.stats(), y: Array.from(out.y.data) }))
    }
    await engine.close()`,
  )
  const child: ChildProcessWithoutNullStreams = spawn('/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', join(cg.dir, 'cgroup.procs'), process.execPath, script])
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(async () => {
    child.kill()
    await exited
  })
  const replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  return {
    pid: child.pid!,
    /** One inference in the child: its stats and outputs. */
    infer: async (): Promise<Reply> => {
      child.stdin.write('infer\n')
      const r = await replies.next()
      if (r.done) throw new Error(`the child exited (${String(await exited)}): ${stderr}`)
      return JSON.parse(r.value as string) as Reply
    },
    close: async (): Promise<number | null> => {
      child.stdin.end()
      return exited
    },
  }
}

t.test("memoryBudget 'auto' in a real cgroup: a lowered limit is followed at the next inference", { timeout: 180_000 }, async (t) => {
  const cg = makeCgroup(t)
  if (typeof cg === 'string') return t.plan(0, cg) // a skip, with the reason
  const pkg = await mlpPackage()
  cg.limit(1024 * MiB)
  const child = startChild(t, cg, pkg.path, pkg.feeds.x!.data as Float32Array)
  const check = (r: Reply, what: string): void => checkOutputs(t, { y: tensor('float32', [1, 512], Float32Array.from(r.y)) }, pkg.want, false, what)

  const first = await child.infer()
  t.match(readFileSync(`/proc/${child.pid}/cgroup`, 'utf8'), cg.dir.slice(cg.dir.lastIndexOf('/')), `the child runs in the test's ${cg.kind} cgroup`)
  const rss = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/^Rss\w+:.*$/gm) ?? []
  t.comment(`child: ${rss.map((l) => l.replace(/\s+/g, ' ')).join(', ')}; its cgroup's usage ${cg.usage()} bytes`)
  const a1 = first.stats.auto!
  t.equal(a1.source, cg.kind, `the child reads its limit from ${cg.kind}`)
  t.equal(a1.limitFile, join(cg.dir, files[cg.kind].limit), 'the file of its own cgroup')
  t.equal(a1.limitBytes, 1024 * MiB)
  t.equal(first.stats.loadBytesPerInference, 0, `1 GiB leaves room for every weight (budget ${first.stats.memoryBudget})`)
  check(first, 'under 1 GiB')

  // Above what the cgroup uses now by room for the re-plan (less would make the kernel reclaim, refuse
  // or kill), and by less than the headroom: the derived budget is ~8 MiB below the one in force.
  const usage = cg.usage()
  const limit = usage + 8 * MiB
  cg.limit(limit)
  const second = await child.infer()
  const s = second.stats
  const a2 = s.auto!
  t.equal(a2.limitBytes, limit, `the next inference saw the new limit (${limit} bytes; the cgroup used ${usage})`)
  t.ok(s.memoryBudget < first.stats.memoryBudget, `and ran under a smaller budget: ${s.memoryBudget} < ${first.stats.memoryBudget}`)
  t.ok(s.memoryBudget <= limit - a2.otherBytes - a2.headroomBytes, `within what the limit leaves: ${s.memoryBudget} <= ${limit} - ${a2.otherBytes} other - ${a2.headroomBytes} headroom`)
  t.ok(s.pinnedBytes < first.stats.pinnedBytes && s.loadBytesPerInference > 0, `with another plan: ${s.pinnedBytes} bytes pinned (was ${first.stats.pinnedBytes}), ${s.loadBytesPerInference} read per inference`)
  t.match(a2.lastChange, { to: s.memoryBudget, from: first.stats.memoryBudget }, `the change is reported (${a2.lastChange?.reason})`)
  check(second, 'under the lowered limit')

  // Below what the package can run in: the engine keeps its minimum plan and says so.
  const tight = cg.usage() + 2 * MiB
  cg.soft(tight)
  const third = await child.infer()
  t.equal(third.stats.auto?.limitFile, join(cg.dir, files[cg.kind].soft), `the soft limit is the tighter (${tight} bytes)`)
  t.equal(third.stats.auto?.status, 'infeasible', 'it leaves less than the minimum: reported')
  t.equal(third.stats.memoryBudget, pkg.minimumBudget, "the budget is the package's minimum")
  check(third, 'under an infeasible limit')
  t.equal(await child.close(), 0, 'the child closes its engine and exits cleanly')
})
