// SPDX-License-Identifier: Apache-2.0
// Reads the memory limit this process runs under, for memoryBudget: 'auto': the tightest cgroup limit
// on its own cgroup and the cgroups above it, the working set of the cgroup that limit belongs to, memory
// pressure (PSI), and MemAvailable when no cgroup limits it. Every path is under `root` ('/' in use; a
// fake /proc + cgroupfs tree in tests). A file that is missing is not a limit; one that is unreadable
// or malformed is ignored and named in the reading, never thrown.
//
// Where the cgroups are: /proc/self/cgroup gives the process's path in each hierarchy (`0::/path` for
// cgroup v2, `N:memory:/path` for the v1 memory controller); /proc/self/mountinfo gives where each
// hierarchy is mounted and which part of it (a container often mounts only its own subtree). cgroup v2
// is used when its hierarchy has the memory controller, else the v1 memory hierarchy (a hybrid machine
// mounts cgroup2 at /sys/fs/cgroup/unified without it). Limits: v2 memory.max and memory.high, v1
// memory.limit_in_bytes and memory.soft_limit_in_bytes, on each level up to the mount (a parent's limit
// binds its children too). A limit at or above the machine's MemTotal limits nothing.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { MemoryReading } from '../plan/budget/auto-budget.js'

export type LimitSource = 'cgroup2' | 'cgroup1' | 'meminfo' | 'none'

/** One reading, with where it came from. */
export interface MemoryLimitReading extends MemoryReading {
  readonly source: LimitSource
  /** The file holding the limit in force. */
  readonly limitFile?: string
  readonly pressureFile?: string
  /** Files ignored, each with the reason. */
  readonly ignored: readonly string[]
}

interface Hierarchy {
  readonly kind: 'cgroup2' | 'cgroup1'
  readonly limits: readonly string[]
  readonly usage: string
  /** The memory.stat line of page cache the kernel reclaims first (not counted as used). */
  readonly inactive: string
}

const v2: Hierarchy = { kind: 'cgroup2', limits: ['memory.max', 'memory.high'], usage: 'memory.current', inactive: 'inactive_file' }
const v1: Hierarchy = { kind: 'cgroup1', limits: ['memory.limit_in_bytes', 'memory.soft_limit_in_bytes'], usage: 'memory.usage_in_bytes', inactive: 'total_inactive_file' }

interface Sources {
  readonly hierarchy?: Hierarchy
  /** The process's cgroup directory first, then each parent up to the mount point. */
  readonly dirs: readonly string[]
  readonly pressureFile?: string
  /** Limits at or above this are none. */
  readonly ceiling: number
  /** /proc/self/cgroup as read: when it changes, the process moved and the sources are found again. */
  readonly membership: string | undefined
  readonly notes: readonly string[]
}

interface Mount {
  readonly root: string
  readonly point: string
  readonly fstype: string
  readonly superOptions: readonly string[]
}

/** The text of `file`; undefined when it does not exist, else the reason it could not be read is noted. */
function readText(file: string, notes: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') notes.push(`${file}: ${code ?? (err as Error).message}`)
    return undefined
  }
}

/** A byte count file: a number, or Infinity for v2's `max`; undefined when missing or malformed (noted). */
function readBytes(file: string, notes: string[]): number | undefined {
  const text = readText(file, notes)?.trim()
  if (text === undefined) return undefined
  if (text === 'max') return Infinity
  if (/^[0-9]+$/.test(text)) return Number(text)
  notes.push(`${file}: expected a byte count or 'max', got '${text.slice(0, 40)}'`)
  return undefined
}

/** The value of `key` in a `key value` file (memory.stat) or `key: N kB` (meminfo, scaled). */
function readKey(file: string, key: string, notes: string[]): number | undefined {
  const text = readText(file, notes)
  if (text === undefined) return undefined
  const m = new RegExp(`^${key}:?\\s+([0-9]+)(\\s+kB)?\\s*$`, 'm').exec(text)
  if (m === null) {
    notes.push(`${file}: no '${key}' line`)
    return undefined
  }
  return Number(m[1]) * (m[2] === undefined ? 1 : 1024)
}

/** PSI `some avg10` of a pressure file, %. */
function readPressure(file: string, notes: string[]): number | undefined {
  const text = readText(file, notes)
  if (text === undefined) return undefined
  const m = /^some\s.*\bavg10=([0-9]+(?:\.[0-9]+)?)\b/m.exec(text)
  if (m === null) notes.push(`${file}: no 'some avg10=' line`)
  return m === null ? undefined : Number(m[1])
}

/** mountinfo fields: `id parent dev root point options [optional...] - fstype source superoptions`. */
function parseMounts(text: string): Mount[] {
  const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
  return text.split('\n').flatMap((line) => {
    const [pre, post] = line.split(' - ')
    const f = pre?.split(' ') ?? []
    const g = post?.split(' ') ?? []
    if (f.length < 5 || g.length < 3) return []
    return [{ root: unescape(f[3]!), point: unescape(f[4]!), fstype: g[0]!, superOptions: g[2]!.split(',') }]
  })
}

/** The directory of cgroup `path` under `mount`; a path outside the mounted part maps to the mount itself. */
function cgroupDir(root: string, mount: Mount, path: string, notes: string[]): string {
  if (mount.root === '/') return join(root, mount.point, path)
  if (path === mount.root || path.startsWith(`${mount.root}/`)) return join(root, mount.point, path.slice(mount.root.length))
  notes.push(`cgroup ${path} is outside the mounted ${mount.root} at ${mount.point}; reading the mount's own limits`)
  return join(root, mount.point)
}

/** `dir` and each parent up to `top`. */
function upTo(dir: string, top: string): string[] {
  const dirs = [dir]
  for (let d = dir; d !== top && d.length > top.length; d = dirname(d)) dirs.push(dirname(d))
  return dirs
}

function findSources(root: string): Sources {
  const notes: string[] = []
  const membership = readText(join(root, 'proc/self/cgroup'), notes)
  const memTotal = readKey(join(root, 'proc/meminfo'), 'MemTotal', notes)
  const ceiling = memTotal ?? Number.MAX_SAFE_INTEGER
  const globalPsi = join(root, 'proc/pressure/memory')
  const mounts = parseMounts(readText(join(root, 'proc/self/mountinfo'), notes) ?? '')
  const paths = (membership ?? '').split('\n').map((l) => /^([0-9]+):([^:]*):(.*)$/.exec(l)).filter((m) => m !== null)
  const v2Path = paths.find((m) => m[1] === '0' && m[2] === '')?.[3]
  const v2Mount = mounts.find((m) => m.fstype === 'cgroup2')
  const v2Dir = v2Path !== undefined && v2Mount !== undefined ? cgroupDir(root, v2Mount, v2Path, notes) : undefined
  // A cgroup's own memory.pressure counts only its tasks; the system-wide file is the fallback (v1).
  const pressureFile = v2Dir !== undefined && readText(join(v2Dir, 'memory.pressure'), []) !== undefined ? join(v2Dir, 'memory.pressure') : globalPsi
  const base = { pressureFile, ceiling, membership, notes }
  if (v2Dir !== undefined && v2Mount !== undefined) {
    const controllers = readText(join(root, v2Mount.point, 'cgroup.controllers'), notes) ?? ''
    if (controllers.split(/\s+/).includes('memory')) return { ...base, hierarchy: v2, dirs: upTo(v2Dir, join(root, v2Mount.point)) }
  }
  const v1Path = paths.find((m) => m[2]!.split(',').includes('memory'))?.[3]
  const v1Mount = mounts.find((m) => m.fstype === 'cgroup' && m.superOptions.includes('memory'))
  if (v1Path !== undefined && v1Mount !== undefined) return { ...base, hierarchy: v1, dirs: upTo(cgroupDir(root, v1Mount, v1Path, notes), join(root, v1Mount.point)) }
  return { ...base, dirs: [] }
}

/** Reads the process's memory limit, working set, pressure and availability; see the top of the file. */
export class MemoryLimitReader {
  private sources: Sources

  constructor(readonly root = '/') {
    this.sources = findSources(root)
  }

  /** The process's memory cgroup as last found: its hierarchy and directory (undefined: none). */
  get cgroup(): { readonly kind: 'cgroup2' | 'cgroup1'; readonly dir: string } | undefined {
    const s = this.sources
    return s.hierarchy === undefined ? undefined : { kind: s.hierarchy.kind, dir: s.dirs[0]! }
  }

  /** One reading (about ten small files, tens of microseconds). */
  read(): MemoryLimitReading {
    const ignored: string[] = []
    if (readText(join(this.root, 'proc/self/cgroup'), ignored) !== this.sources.membership) this.sources = findSources(this.root)
    const s = this.sources
    ignored.push(...s.notes)
    const pressure = s.pressureFile === undefined ? undefined : readPressure(s.pressureFile, ignored)
    const psi = pressure === undefined ? {} : { pressure, pressureFile: s.pressureFile! }
    const h = s.hierarchy
    let limit: { bytes: number; file: string; dir: string } | undefined
    for (const dir of h === undefined ? [] : s.dirs) {
      for (const name of h!.limits) {
        const bytes = readBytes(join(dir, name), ignored)
        if (bytes !== undefined && bytes < s.ceiling && (limit === undefined || bytes < limit.bytes)) limit = { bytes, file: join(dir, name), dir }
      }
    }
    if (h !== undefined && limit !== undefined) {
      const usage = readBytes(join(limit.dir, h.usage), ignored)
      const inactive = usage === undefined ? undefined : readKey(join(limit.dir, 'memory.stat'), h.inactive, ignored)
      const used = usage === undefined ? {} : { usedBytes: Math.max(0, usage - (inactive ?? 0)) }
      return { source: h.kind, limitBytes: limit.bytes, limitFile: limit.file, ...used, ...psi, ignored }
    }
    const available = readKey(join(this.root, 'proc/meminfo'), 'MemAvailable', ignored)
    if (available !== undefined) return { source: 'meminfo', availableBytes: available, ...psi, ignored }
    return { source: 'none', ...psi, ignored }
  }
}
