// SPDX-License-Identifier: Apache-2.0
// Where the CLI keeps what it makes once and reuses (the demo's prepared package and device profile):
// $FLEXPIPE_CACHE_DIR, else $XDG_CACHE_HOME/flexpipe, else ~/.cache/flexpipe, else (no home, or one
// that cannot be written: a service user, a read-only image) <tmpdir>/flexpipe-<uid>. Never inside the
// installed package, whose folder may belong to root or sit on a read-only file system.
import { mkdir } from 'node:fs/promises'
import { homedir, tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

function candidates(): string[] {
  const env = process.env
  if (env.FLEXPIPE_CACHE_DIR) return [env.FLEXPIPE_CACHE_DIR]
  const out: string[] = []
  if (env.XDG_CACHE_HOME) out.push(join(env.XDG_CACHE_HOME, 'flexpipe'))
  let home = ''
  try {
    home = homedir()
  } catch {}
  if (home) out.push(join(home, '.cache', 'flexpipe'))
  let uid = 'user'
  try {
    uid = String(userInfo().uid)
  } catch {}
  out.push(join(tmpdir(), `flexpipe-${uid}`))
  return out
}

/** The first cache folder that exists or can be made, with `sub` made inside it. */
export async function cacheDir(sub: string): Promise<string> {
  let last: unknown
  for (const dir of candidates()) {
    try {
      const path = join(dir, sub)
      await mkdir(path, { recursive: true })
      return path
    } catch (err) {
      last = err
    }
  }
  throw last
}
