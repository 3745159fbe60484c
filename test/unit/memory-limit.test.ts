// SPDX-License-Identifier: Apache-2.0
// The memory-limit reader (lib/runtime/memory-limit.ts) on fake /proc + cgroupfs trees: cgroup v2 with
// memory.max, memory.high and 'max', limits on a parent, a container's partial mount, a hybrid machine
// with the memory controller on v1, no cgroup at all, and malformed or unreadable files, which are named
// in the reading and never thrown.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { MemoryLimitReader } from '../../lib/runtime/memory-limit.js'

const MiB = 2 ** 20
const meminfo = (totalKb: number, availableKb: number): string => `MemTotal:       ${totalKb} kB\nMemFree:        1000 kB\nMemAvailable:   ${availableKb} kB\nBuffers:        0 kB\n`
const psi = (avg10: number): string => `some avg10=${avg10.toFixed(2)} avg60=0.00 avg300=0.00 total=12\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`

/** A fake root with `files` (paths relative to it); removed when `t` ends. */
function fakeRoot(t: Test, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flexpipe-cgroupfs-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  write(root, files)
  return root
}

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
}

/** A pure cgroup v2 machine, the process in /app/worker, memory delegated all the way down. */
function v2Machine(t: Test, cg: Record<string, string>): string {
  return fakeRoot(t, {
    'proc/self/cgroup': '0::/app/worker\n',
    'proc/self/mountinfo': '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n',
    'proc/meminfo': meminfo(8 * 1024 * 1024, 6 * 1024 * 1024),
    'proc/pressure/memory': psi(0.5),
    'sys/fs/cgroup/cgroup.controllers': 'cpuset cpu io memory pids\n',
    ...Object.fromEntries(Object.entries(cg).map(([k, v]) => [join('sys/fs/cgroup', k), v])),
  })
}

t.test('cgroup v2: the lower of memory.max and memory.high, the working set of that cgroup, its own PSI', async (t) => {
  const root = v2Machine(t, {
    'app/worker/memory.max': `${512 * MiB}\n`,
    'app/worker/memory.high': `${384 * MiB}\n`,
    'app/worker/memory.current': `${200 * MiB}\n`,
    'app/worker/memory.stat': `anon 100\nfile 300\ninactive_file ${50 * MiB}\nactive_file 7\n`,
    'app/worker/memory.pressure': psi(12.25),
  })
  const r = new MemoryLimitReader(root).read()
  t.equal(r.source, 'cgroup2')
  t.equal(r.limitBytes, 384 * MiB, 'memory.high is the tighter')
  t.equal(r.limitFile, join(root, 'sys/fs/cgroup/app/worker/memory.high'))
  t.equal(r.usedBytes, 150 * MiB, 'memory.current less inactive_file')
  t.equal(r.pressure, 12.25, "the cgroup's own memory.pressure")
  t.equal(r.pressureFile, join(root, 'sys/fs/cgroup/app/worker/memory.pressure'))
  t.same(r.ignored, [])
})

t.test("cgroup v2: 'max' on the process's cgroup, a limit on its parent binds, with the parent's usage", async (t) => {
  const root = v2Machine(t, {
    'app/memory.max': `${256 * MiB}\n`,
    'app/memory.high': 'max\n',
    'app/memory.current': `${100 * MiB}\n`,
    'app/worker/memory.max': 'max\n',
    'app/worker/memory.high': 'max\n',
    'app/worker/memory.current': `${10 * MiB}\n`,
  })
  const r = new MemoryLimitReader(root).read()
  t.equal(r.limitBytes, 256 * MiB)
  t.equal(r.limitFile, join(root, 'sys/fs/cgroup/app/memory.max'))
  t.equal(r.usedBytes, 100 * MiB, 'no memory.stat: the usage as it is')
  t.equal(r.pressure, 0.5, 'no memory.pressure in the cgroup: the system-wide PSI')
})

t.test("cgroup v2: 'max' everywhere, or limits at or above MemTotal, fall back to MemAvailable", async (t) => {
  for (const max of ['max', String(8 * 1024 * MiB), String(2 ** 62)]) {
    const root = v2Machine(t, { 'app/worker/memory.max': `${max}\n`, 'app/worker/memory.high': 'max\n' })
    const r = new MemoryLimitReader(root).read()
    t.equal(r.source, 'meminfo', `memory.max ${max}`)
    t.equal(r.availableBytes, 6 * 1024 * MiB, 'MemAvailable in bytes')
    t.equal(r.limitBytes, undefined)
  }
})

t.test("a container's mount of its own subtree: /proc/self/cgroup's path maps to the mount point", async (t) => {
  const root = fakeRoot(t, {
    'proc/self/cgroup': '0::/system.slice/docker-abc.scope\n',
    'proc/self/mountinfo': '40 30 0:26 /system.slice/docker-abc.scope /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n',
    'proc/meminfo': meminfo(4 * 1024 * 1024, 3 * 1024 * 1024),
    'sys/fs/cgroup/cgroup.controllers': 'cpu memory pids\n',
    'sys/fs/cgroup/memory.max': `${300 * MiB}\n`,
    'sys/fs/cgroup/memory.current': `${20 * MiB}\n`,
  })
  const r = new MemoryLimitReader(root).read()
  t.equal(r.limitBytes, 300 * MiB)
  t.equal(r.limitFile, join(root, 'sys/fs/cgroup/memory.max'))
  t.same(r.ignored, [])
})

t.test('a hybrid machine: cgroup2 without the memory controller, the v1 memory hierarchy; v1 "unlimited" is none', async (t) => {
  const v1 = 'sys/fs/cgroup/memory/jobs/job1'
  const files = {
    'proc/self/cgroup': '4:memory:/jobs/job1\n3:cpu,cpuacct:/\n0::/\n',
    'proc/self/mountinfo': [
      '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
      '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
    ].join('\n'),
    'proc/meminfo': meminfo(8 * 1024 * 1024, 5 * 1024 * 1024),
    'proc/pressure/memory': psi(3),
    'sys/fs/cgroup/unified/cgroup.controllers': 'hugetlb\n',
    'sys/fs/cgroup/unified/memory.pressure': psi(4),
    'sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
    'sys/fs/cgroup/memory/jobs/memory.limit_in_bytes': '9223372036854771712\n',
    [`${v1}/memory.limit_in_bytes`]: `${1024 * MiB}\n`,
    [`${v1}/memory.soft_limit_in_bytes`]: `${768 * MiB}\n`,
    [`${v1}/memory.usage_in_bytes`]: `${400 * MiB}\n`,
    [`${v1}/memory.stat`]: `cache 10\ninactive_file 1\ntotal_inactive_file ${100 * MiB}\n`,
  }
  const root = fakeRoot(t, files)
  const r = new MemoryLimitReader(root).read()
  t.equal(r.source, 'cgroup1')
  t.equal(r.limitBytes, 768 * MiB, 'the soft limit is the tighter')
  t.equal(r.limitFile, join(root, v1, 'memory.soft_limit_in_bytes'))
  t.equal(r.usedBytes, 300 * MiB, 'usage_in_bytes less total_inactive_file')
  t.equal(r.pressure, 4, "PSI of the process's cgroup2 directory (here its root)")
  write(root, { [`${v1}/memory.soft_limit_in_bytes`]: '9223372036854771712\n', [`${v1}/memory.limit_in_bytes`]: '9223372036854771712\n' })
  const none = new MemoryLimitReader(root).read()
  t.equal(none.source, 'meminfo', 'unlimited at every level')
  t.equal(none.availableBytes, 5 * 1024 * MiB)
})

t.test('no cgroup and no /proc/meminfo: source none, nothing ignored', async (t) => {
  const r = new MemoryLimitReader(fakeRoot(t, { 'etc/hostname': 'box\n' })).read()
  t.same(r, { source: 'none', ignored: [] })
})

t.test('malformed or unreadable files are ignored with the reason, never thrown', async (t) => {
  const root = v2Machine(t, {
    'app/worker/memory.max': 'lots\n',
    'app/worker/memory.high': `${64 * MiB}\n`,
    'app/worker/memory.current': '-5\n',
    'app/worker/memory.pressure': 'some avg10=high\n',
  })
  mkdirSync(join(root, 'sys/fs/cgroup/app/memory.max'), { recursive: true }) // a directory where a file belongs: EISDIR
  const r = new MemoryLimitReader(root).read()
  t.equal(r.source, 'cgroup2')
  t.equal(r.limitBytes, 64 * MiB, 'the well-formed limit still counts')
  t.equal(r.usedBytes, undefined, 'a malformed usage is none')
  t.equal(r.pressure, undefined)
  for (const reason of [/memory\.max: expected a byte count or 'max', got 'lots'/, /app\/memory\.max: EISDIR/, /memory\.current: expected a byte count/, /memory\.pressure: no 'some avg10=' line/]) {
    t.ok(r.ignored.some((x) => reason.test(x)), `ignored: ${reason.source}`)
  }
  t.equal(r.ignored.length, 4, r.ignored.join('; '))

  write(root, { 'proc/meminfo': 'MemTotal: 100 kB\n', 'proc/self/mountinfo': 'garbage\n' })
  const broken = new MemoryLimitReader(root).read()
  t.equal(broken.source, 'none', 'no mount found, no MemAvailable')
  t.ok(broken.ignored.some((x) => /meminfo: no 'MemAvailable' line/.test(x)), broken.ignored.join('; '))
})

t.test('a process moved to another cgroup is followed on the next reading', async (t) => {
  const root = v2Machine(t, { 'app/worker/memory.max': `${512 * MiB}\n`, 'app/other/memory.max': `${128 * MiB}\n` })
  const reader = new MemoryLimitReader(root)
  t.equal(reader.read().limitBytes, 512 * MiB)
  write(root, { 'proc/self/cgroup': '0::/app/other\n' })
  t.equal(reader.read().limitBytes, 128 * MiB)
})

t.test('mount points with escaped spaces', async (t) => {
  const root = fakeRoot(t, {
    'proc/self/cgroup': '0::/a\n',
    'proc/self/mountinfo': '30 22 0:26 / /cg\\040root rw - cgroup2 cgroup2 rw\n',
    'cg root/cgroup.controllers': 'memory\n',
    'cg root/a/memory.max': `${100 * MiB}\n`,
  })
  t.equal(new MemoryLimitReader(root).read().limitBytes, 100 * MiB)
})
