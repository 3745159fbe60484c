// SPDX-License-Identifier: Apache-2.0
// The IO delay line of an elastic device profile: ms = msPerJob + bytes * msPerByte, fitted to the
// measured (bytes, ms) points by least squares with both terms >= 0 (a read never takes negative time,
// and a job costs at least nothing besides its bytes).

/**
 * The least-squares line with msPerByte >= 0 and msPerJob >= 0. When the unconstrained fit has a
 * negative term, the optimum lies on a boundary: through the origin (msPerJob = 0) or flat (msPerByte =
 * 0), whichever fits better.
 */
export function fitLine(samples: ReadonlyArray<readonly [number, number]>): { msPerByte: number; msPerJob: number } {
  const n = samples.length
  if (n === 0) return { msPerByte: 0, msPerJob: 0 }
  const mb = samples.reduce((a, [b]) => a + b, 0) / n
  const mt = samples.reduce((a, [, t]) => a + t, 0) / n
  const sxx = samples.reduce((a, [b]) => a + (b - mb) ** 2, 0)
  const sxy = samples.reduce((a, [b, t]) => a + (b - mb) * (t - mt), 0)
  if (sxx > 0) {
    const slope = sxy / sxx
    const intercept = mt - slope * mb
    if (slope >= 0 && intercept >= 0) return { msPerByte: slope, msPerJob: intercept }
  }
  const sse = (l: { msPerByte: number; msPerJob: number }): number => samples.reduce((a, [b, t]) => a + (l.msPerJob + b * l.msPerByte - t) ** 2, 0)
  const sbb = samples.reduce((a, [b]) => a + b * b, 0)
  const sbt = samples.reduce((a, [b, t]) => a + b * t, 0)
  const throughOrigin = { msPerByte: sbb > 0 ? Math.max(0, sbt / sbb) : 0, msPerJob: 0 }
  const flat = { msPerByte: 0, msPerJob: Math.max(0, mt) }
  return sse(throughOrigin) <= sse(flat) ? throughOrigin : flat
}
