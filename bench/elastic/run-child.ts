// SPDX-License-Identifier: Apache-2.0
// The parent's side of measure-child.js: spawn it with one request and read its one JSON answer line.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildAnswer, ChildRequest } from './configs.js'

const childJs = join(dirname(fileURLToPath(import.meta.url)), 'measure-child.js')

/** Runs the child; a missing answer line becomes a Failure carrying the tail of its stderr. */
export function measureChild(request: ChildRequest, timeoutS: number): ChildAnswer {
  const r = spawnSync(process.execPath, ['--expose-gc', childJs, JSON.stringify(request)], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 64 << 20 })
  const line = (r.stdout ?? '').split('\n').filter((l) => l.startsWith('{')).pop()
  if (line !== undefined) return JSON.parse(line) as ChildAnswer
  const why = r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : `exit code ${r.status}`
  const tail = (r.stderr ?? '').trim().split('\n').slice(-4).join(' / ')
  return { ok: false, error: `measure-child: ${why}${tail ? `: ${tail}` : ''}` }
}
