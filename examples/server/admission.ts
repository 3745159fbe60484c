// SPDX-License-Identifier: Apache-2.0
// AdmissionQueue: the bound between clients and one engine. An engine runs one inference at a time (its
// cores are already all busy in that one call), so a request either starts now, waits in a queue of at
// most `limit`, or is refused at once (the server answers 429 with Retry-After). Refusing early is what
// keeps latency bounded under a flood: an unbounded queue turns overload into ever-growing waits and
// memory. A request whose deadline passes while it waits is dropped without running.

/** Why a request was not run. */
export type Refusal = 'full' | 'draining'

export class Cancelled extends Error {
  override readonly name = 'Cancelled'
  constructor() {
    super('the client went away before an engine was free')
  }
}

export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded'
  constructor(readonly waitedMs: number) {
    super(`the request waited ${waitedMs.toFixed(0)} ms in the queue and passed its deadline before an engine was free`)
  }
}

/** What one admitted request measured. */
export interface Timing {
  readonly queueMs: number
  readonly serviceMs: number
}

export type Admission<T> =
  | { readonly admitted: false; readonly refusal: Refusal }
  | {
      readonly admitted: true
      readonly result: Promise<{ value: T; timing: Timing }>
      /** Drops the request if it still waits (its result rejects with Cancelled); no effect once it runs. */
      readonly cancel: () => void
    }

interface Waiting {
  readonly start: () => void
  readonly drop: (reason: Error) => void
  timer: NodeJS.Timeout | undefined
}

export class AdmissionQueue {
  private readonly waiting: Waiting[] = []
  private running = 0
  private closed = false
  private idleWaiters: (() => void)[] = []
  /** The deepest the queue has been since the server started (the bound's proof under load). */
  maxDepth = 0
  /** Recent service times (ms), newest last: the Retry-After estimate. */
  private readonly recentServiceMs: number[] = []

  constructor(
    /** Requests that may wait while `concurrency` run. */
    readonly limit: number,
    /** Requests run at once: 1 for an engine that uses every core per call. */
    readonly concurrency = 1,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`queue limit: expected a non-negative integer, got ${limit}`)
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency: expected a positive integer, got ${concurrency}`)
  }

  get depth(): number {
    return this.waiting.length
  }

  get inflight(): number {
    return this.running
  }

  /** What submit() would answer now, if a refusal: lets a server refuse before reading a request's body. */
  wouldRefuse(): Refusal | undefined {
    if (this.closed) return 'draining'
    return this.running >= this.concurrency && this.waiting.length >= this.limit ? 'full' : undefined
  }

  /**
   * Admits `work` to run when a slot is free, or refuses it now. The result rejects with
   * DeadlineExceeded when `deadline` (a Date.now() time) passes before the work starts.
   */
  submit<T>(work: () => Promise<T>, deadline: number): Admission<T> {
    const refusal = this.wouldRefuse()
    if (refusal !== undefined) return { admitted: false, refusal }
    const queuedAt = performance.now()
    let entry: Waiting | undefined
    const result = new Promise<{ value: T; timing: Timing }>((resolve, reject) => {
      const run = (): void => {
        this.running++
        const startedAt = performance.now()
        work().then(
          (value) => {
            const serviceMs = performance.now() - startedAt
            this.noteService(serviceMs)
            this.finish()
            resolve({ value, timing: { queueMs: startedAt - queuedAt, serviceMs } })
          },
          (err: unknown) => {
            this.finish()
            reject(err)
          },
        )
      }
      if (this.running < this.concurrency) {
        run()
        return
      }
      const waiting: Waiting = { start: run, drop: reject, timer: undefined }
      waiting.timer = setTimeout(() => this.drop(waiting, new DeadlineExceeded(performance.now() - queuedAt)), Math.max(0, deadline - Date.now()))
      entry = waiting
      this.waiting.push(waiting)
      this.maxDepth = Math.max(this.maxDepth, this.waiting.length)
    })
    return { admitted: true, result, cancel: () => entry !== undefined && this.drop(entry, new Cancelled()) }
  }

  /** Seconds a client refused now should wait: the queue ahead of it at the recent median service time. */
  retryAfterSeconds(): number {
    return retryAfterSeconds(this.waiting.length + this.running, this.concurrency, median(this.recentServiceMs) ?? 100)
  }

  /** Refuses new work from now on; what was admitted still runs. */
  close(): void {
    this.closed = true
  }

  /** Resolves when nothing runs or waits. */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private finish(): void {
    this.running--
    const next = this.waiting.shift()
    if (next !== undefined) {
      clearTimeout(next.timer)
      next.start()
    }
    this.notifyIdle()
  }

  /** Removes a request still waiting and rejects it with `reason`; false if it no longer waits. */
  private drop(entry: Waiting, reason: Error): boolean {
    const i = this.waiting.indexOf(entry)
    if (i < 0) return false
    this.waiting.splice(i, 1)
    clearTimeout(entry.timer)
    entry.drop(reason)
    this.notifyIdle()
    return true
  }

  private notifyIdle(): void {
    if (this.running > 0 || this.waiting.length > 0) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const w of waiters) w()
  }

  private noteService(ms: number): void {
    this.recentServiceMs.push(ms)
    if (this.recentServiceMs.length > 64) this.recentServiceMs.shift()
  }
}

/** Whole seconds (at least 1) until `ahead` requests have run, `concurrency` at a time, `serviceMs` each. */
export function retryAfterSeconds(ahead: number, concurrency: number, serviceMs: number): number {
  return Math.max(1, Math.ceil((ahead * serviceMs) / concurrency / 1000))
}

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}
