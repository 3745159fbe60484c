// SPDX-License-Identifier: Apache-2.0
// Typed attribute access with defaults; a wrong attribute type is a model error naming the node.
import { ModelFormatError } from '../errors.js'
import type { AttrValue, Node, TensorData } from './ir.js'

function bad(node: Node, name: string, want: string, got: AttrValue): ModelFormatError {
  const kind = Array.isArray(got) ? 'list' : typeof got
  return new ModelFormatError(`node '${node.name}' (${node.opType}): attribute ${name} must be ${want} (got ${kind})`)
}

export function attrInt(node: Node, name: string, fallback: number): number {
  const v = node.attrs.get(name)
  if (v === undefined) return fallback
  if (typeof v !== 'number') throw bad(node, name, 'an int', v)
  return v
}

export function attrFloat(node: Node, name: string, fallback: number): number {
  return attrInt(node, name, fallback)
}

export function attrInts(node: Node, name: string): number[] | undefined
export function attrInts(node: Node, name: string, fallback: number[]): number[]
export function attrInts(node: Node, name: string, fallback?: number[]): number[] | undefined {
  const v = node.attrs.get(name)
  if (v === undefined) return fallback
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'number')) throw bad(node, name, 'a list of numbers', v)
  return v as number[]
}

export const attrFloats = attrInts

export function attrString(node: Node, name: string, fallback: string): string {
  const v = node.attrs.get(name)
  if (v === undefined) return fallback
  if (typeof v !== 'string') throw bad(node, name, 'a string', v)
  return v
}

export function attrTensor(node: Node, name: string): TensorData | undefined {
  const v = node.attrs.get(name)
  if (v === undefined) return undefined
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(node, name, 'a tensor', v)
  return v
}
