// SPDX-License-Identifier: Apache-2.0
// Symbolic dims (lib/model/dims.ts writes them: 'seq_len*12', '((h-1)/2)+1', 'ceil(w/4)') compiled once
// into functions of the input dims' values: the shape functions a bucket's program template evaluates on
// every new input shape (Nimble's shape functions, run on the host before the kernels).
//
// Grammar (what dims.ts writes; '/' is floor division):
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*
//   factor := integer | symbol | '(' expr ')' | 'ceil(' expr '/' expr ')'
// Symbols are matched against the names the caller declares, longest first, so a dim_param such as
// 'batch-size' is one symbol, not a subtraction.
import type { Dim } from '../../model/ir.js'

/** Values of the symbolic dims, by name. */
export type DimBindings = ReadonlyMap<string, number>

export type DimFn = (b: DimBindings) => number

/** A dim that is not an expression of the declared symbols: the template cannot evaluate it. */
export class DimExprError extends Error {
  override readonly name = 'DimExprError'
}

type Node =
  | { readonly k: 'n'; readonly v: number }
  | { readonly k: 's'; readonly name: string }
  | { readonly k: '+' | '-' | '*' | '/' | 'ceil'; readonly a: Node; readonly b: Node }

class Parser {
  private i = 0
  constructor(
    private readonly s: string,
    private readonly symbols: readonly string[],
  ) {}

  parse(): Node {
    const e = this.expr()
    if (this.i !== this.s.length) this.fail('unexpected text')
    return e
  }

  private fail(what: string): never {
    throw new DimExprError(`dim '${this.s}': ${what} at ${this.i}`)
  }

  private expr(): Node {
    let a = this.term()
    for (;;) {
      const c = this.s[this.i]
      if (c !== '+' && c !== '-') return a
      this.i++
      a = { k: c, a, b: this.term() }
    }
  }

  private term(): Node {
    let a = this.factor()
    for (;;) {
      const c = this.s[this.i]
      if (c !== '*' && c !== '/') return a
      this.i++
      a = { k: c, a, b: this.factor() }
    }
  }

  private factor(): Node {
    const rest = this.s.slice(this.i)
    const sym = this.symbols.find((n) => rest.startsWith(n) && !/^[\w.]/.test(rest.slice(n.length)))
    if (sym !== undefined) {
      this.i += sym.length
      return { k: 's', name: sym }
    }
    if (rest.startsWith('ceil(')) {
      this.i += 5
      const q = this.expr()
      if (q.k !== '/') this.fail("ceil() of something other than a division")
      this.expect(')')
      return { k: 'ceil', a: q.a, b: q.b }
    }
    if (rest.startsWith('(')) {
      this.i++
      const e = this.expr()
      this.expect(')')
      return e
    }
    const m = /^\d+/.exec(rest)
    if (m === null) this.fail('not a declared symbol or a number')
    this.i += m[0].length
    return { k: 'n', v: Number(m[0]) }
  }

  private expect(c: string): void {
    if (this.s[this.i] !== c) this.fail(`expected '${c}'`)
    this.i++
  }
}

function toFn(n: Node): DimFn {
  switch (n.k) {
    case 'n': {
      const v = n.v
      return () => v
    }
    case 's': {
      const name = n.name
      return (b) => {
        const v = b.get(name)
        if (v === undefined) throw new DimExprError(`dim '${name}' is not bound`)
        return v
      }
    }
    default: {
      const a = toFn(n.a)
      const b = toFn(n.b)
      switch (n.k) {
        case '+':
          return (x) => a(x) + b(x)
        case '-':
          return (x) => a(x) - b(x)
        case '*':
          return (x) => a(x) * b(x)
        case '/':
          return (x) => Math.floor(a(x) / b(x))
        case 'ceil':
          return (x) => Math.ceil(a(x) / b(x))
      }
    }
  }
}

/**
 * Compiles a dim into a function of the symbols' values. Throws DimExprError when the dim uses a name
 * that is not among `symbols` or syntax dims.ts does not write.
 */
export function compileDim(d: Dim, symbols: readonly string[]): DimFn {
  if (typeof d === 'number') return () => d
  const longestFirst = [...symbols].sort((a, b) => b.length - a.length)
  return toFn(new Parser(d, longestFirst).parse())
}
