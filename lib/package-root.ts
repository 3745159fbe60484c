// SPDX-License-Identifier: Apache-2.0
// The package's folder: the nearest folder above this module that holds a package.json. It finds
// the same folder from dist/lib/<dir>/ (the compiled modules) and from dist/ (the bundles that the
// package's entry points name, scripts/bundle.mjs).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function nearestPackage(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) return from
  }
}

export const packageRoot: string = nearestPackage(dirname(fileURLToPath(import.meta.url)))
