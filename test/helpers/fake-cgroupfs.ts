// SPDX-License-Identifier: Apache-2.0
// A fake machine for MemoryLimitReader (its root path): a cgroup v2 hierarchy with the memory
// controller, mounted at /sys/fs/cgroup, and this process in /app. Tests add the files they vary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Test } from 'tap'

export interface FakeCgroupfs {
  readonly root: string
  /** Writes `text` at `path` under the root (directories made as needed). */
  put(path: string, text: string): void
}

/** The fake tree, removed when `t` ends. */
export function fakeCgroupV2(t: Test): FakeCgroupfs {
  const root = mkdtempSync(join(tmpdir(), 'flexpipe-cgroupfs-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const put = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  put('proc/self/cgroup', '0::/app\n')
  put('proc/self/mountinfo', '30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n')
  put('sys/fs/cgroup/cgroup.controllers', 'memory\n')
  return { root, put }
}
