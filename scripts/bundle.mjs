#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Bundles the compiled library (dist/lib, from tsc) into the two files the package's entry points name:
//   dist/flexpipe.js       the API (package.json "exports" / "main")
//   dist/flexpipe-cli.js   the `flexpipe` command
// One file instead of ~150 ES modules: a fresh process imports flexpipe in a third of the time (module
// resolution, loading and linking per file was most of it; docs/benchmarks/zoo.md, cold start).
// Dependencies stay external (resolved from node_modules at run time). The tests import dist/lib's
// modules; test/unit/bundle.test.ts checks that the bundles are what the modules are.
import { build } from 'esbuild'
import { chmod } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node18', packages: 'external', logLevel: 'warning', legalComments: 'none' }
await build({ ...common, entryPoints: [join(root, 'dist', 'lib', 'index.js')], outfile: join(root, 'dist', 'flexpipe.js') })
await build({ ...common, entryPoints: [join(root, 'dist', 'lib', 'cli', 'main.js')], outfile: join(root, 'dist', 'flexpipe-cli.js') })
await chmod(join(root, 'dist', 'flexpipe-cli.js'), 0o755)
