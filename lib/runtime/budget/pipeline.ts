// SPDX-License-Identifier: Apache-2.0
// The load and compute queues of one inference, synchronized only by the planned dependencies
// (FlexNN's dependency-based sync):
//
//   load(j) < comp(step(j))        a weight is loaded before the op that reads it runs
//   comp(after(j)) < load(j)       a weight's bytes are free only once op after(j) is done (the memory
//                                  plan's overlap edges; -1: no dependency)
//
// The load queue issues loads in planned order (the type-based allocator's weight order), in batches: the
// loads at its head whose dependencies already hold (up to batchBytes) go out as one call, so the reader
// keeps several requests in flight (io_uring queue depth) instead of one weight at a time; the next batch
// starts when this one is done.
// The compute queue runs ops in order, in batches: a batch runs as one native call and ends where the
// next op still waits for a load, or right after the op the head of the load queue waits for (so that
// load starts as early as the plan allows). With every weight pinned there are no loads and an inference
// is a single native call. Both queues stop at the first error and the pipeline rejects with it.

export interface PipelineLoad {
  /** The op that reads the weight. */
  readonly step: number
  /** The op that must finish before the load may start (-1: none). */
  readonly after: number
  /** Bytes read (for batching; default 0). */
  readonly bytes?: number
}

/** Most bytes one load batch reads. */
export const batchBytes = 32 << 20

export interface PipelineSchedule {
  readonly ops: number
  /** Loads in queue order. */
  readonly loads: readonly PipelineLoad[]
}

export interface PipelineIo {
  /** Loads [begin, end) of the queue (one batch). */
  load(begin: number, end: number): Promise<void>
  /** Runs ops [begin, end). */
  compute(begin: number, end: number): Promise<void>
}

/** For each op k, how many loads (a prefix of the queue) must be done before k runs. */
export function loadsNeeded(s: PipelineSchedule): Int32Array {
  const need = new Int32Array(s.ops + 1)
  s.loads.forEach((l, j) => {
    if (l.after >= l.step) throw new Error(`pipeline: load ${j} waits for op ${l.after} but op ${l.step} reads it`)
    need[l.step] = Math.max(need[l.step]!, j + 1)
  })
  for (let k = 1; k <= s.ops; k++) need[k] = Math.max(need[k]!, need[k - 1]!)
  return need
}

/** Runs one inference through both queues. */
export async function runPipeline(s: PipelineSchedule, io: PipelineIo, need: Int32Array = loadsNeeded(s)): Promise<void> {
  let computed = 0 // ops [0, computed) are done
  let started = 0 // loads [0, started) were issued
  let loaded = 0 // loads [0, loaded) are done
  let failed: unknown
  let loadsDone = false
  let computeDone = false
  const waiters = new Set<() => void>()
  const notify = (): void => {
    for (const w of [...waiters]) w()
    waiters.clear()
  }
  const fail = (err: unknown): void => {
    failed ??= err
    notify()
  }
  /** Waits until ready() or failure; a queue that waits on a finished queue is a schedule bug. */
  const waitFor = async (ready: () => boolean, otherDone: () => boolean, what: string): Promise<boolean> => {
    while (!ready() && failed === undefined) {
      if (otherDone()) {
        fail(new Error(`pipeline stalled: ${what} (computed ${computed}/${s.ops} ops, loaded ${loaded}/${s.loads.length})`))
        break
      }
      await new Promise<void>((r) => waiters.add(r))
    }
    return failed === undefined
  }
  let loadLoop: Promise<void>
  let computeLoop: Promise<void>
  loadLoop = (async () => {
    for (let j = 0; j < s.loads.length; ) {
      const after = s.loads[j]!.after
      if (!(await waitFor(() => computed > after, () => computeDone, `load ${j} waits for op ${after}`))) return
      let end = j + 1
      let bytes = s.loads[j]!.bytes ?? 0
      while (end < s.loads.length && computed > s.loads[end]!.after && bytes + (s.loads[end]!.bytes ?? 0) <= batchBytes) {
        bytes += s.loads[end]!.bytes ?? 0
        end++
      }
      started = end
      try {
        await io.load(j, end)
      } catch (err) {
        fail(err)
        return
      }
      loaded = end
      j = end
      notify()
    }
  })().finally(() => {
    loadsDone = true
    notify()
  })
  computeLoop = (async () => {
    while (computed < s.ops) {
      const begin = computed
      if (!(await waitFor(() => loaded >= need[begin]!, () => loadsDone, `op ${begin} waits for load ${need[begin]! - 1}`))) return
      let end = begin + 1
      while (end < s.ops && loaded >= need[end]!) end++
      const head = s.loads[started]
      if (head !== undefined && head.after >= begin && head.after < end) end = head.after + 1
      try {
        await io.compute(begin, end)
      } catch (err) {
        fail(err)
        return
      }
      computed = end
      notify()
    }
  })().finally(() => {
    computeDone = true
    notify()
  })
  await Promise.all([loadLoop, computeLoop])
  if (failed !== undefined) throw failed
}
