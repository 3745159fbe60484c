// SPDX-License-Identifier: Apache-2.0
// Runs async jobs one after another, in the order they were pushed; a failed job does not stop the queue.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()

  push<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job)
    // Settle to undefined: the tail must not hold the job's result (an inference's outputs) alive.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    )
    return result
  }

  /** Resolves when every job pushed so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined)
  }
}
