// SPDX-License-Identifier: Apache-2.0
// Rounding byte counts and offsets to an alignment (a positive integer, usually a power of two).

/** The smallest multiple of `a` that is >= n. */
export const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a

/** The largest multiple of `a` that is <= n. */
export const alignDown = (n: number, a: number): number => Math.floor(n / a) * a
