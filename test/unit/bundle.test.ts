// SPDX-License-Identifier: Apache-2.0
// The bundles the package's entry points name (scripts/bundle.mjs) are the library and the CLI the rest
// of the tests check module by module: the same exports, one model through the bundled API against the
// modules' result, typed errors that are the bundle's own classes, and the bundled CLI running a model.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import * as modules from '../../lib/index.js'
import { fixtures, randomFloat, repoRoot } from '../helpers/data.js'

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  main: string
  types: string
  exports: { '.': { types: string; default: string } }
  bin: Record<string, string>
}
const resnet = join(fixtures, 'models', 'resnet_small.onnx') as `${string}.onnx`

t.test('package.json names the bundles', async (t) => {
  t.equal(pkg.exports['.'].default, pkg.main)
  // TypeScript under NodeNext resolution reads the types through "exports", not the top-level field
  t.equal(pkg.exports['.'].types, pkg.types)
  t.equal(pkg.types, './dist/lib/index.d.ts')
  t.equal(pkg.main, './dist/flexpipe.js')
  t.equal(pkg.bin.flexpipe, './dist/flexpipe-cli.js')
})

t.test('the bundled API exports what lib/index exports and computes the same result', async (t) => {
  const bundle = (await import(pathToFileURL(join(repoRoot, pkg.main)).href)) as typeof modules
  t.same(Object.keys(bundle).sort(), Object.keys(modules).sort())
  t.not(bundle.open, modules.open, 'the bundle is its own copy, not a re-export of dist/lib')
  const input = randomFloat([1, 3, 64, 64], 5)
  const a = await bundle.open(resnet, { threads: 1 })
  const b = await modules.open(resnet, { threads: 1 })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const ya = (await a.infer({ input })).logits!.data as Float32Array
  const yb = (await b.infer({ input })).logits!.data as Float32Array
  t.same(Array.from(ya), Array.from(yb), 'bit-identical logits')
  const err = await a.infer({ wrong: input }).catch((e: unknown) => e)
  t.ok(err instanceof bundle.InputError, 'a bad input name is the bundle\'s InputError')
  t.ok(err instanceof bundle.FlexpipeError)
  t.equal((err as modules.FlexpipeError).code, 'ERR_FLEXPIPE_INPUT')
})

t.test('the bundled CLI runs a model', async (t) => {
  const r = spawnSync(process.execPath, [join(repoRoot, pkg.bin.flexpipe!), 'run', resnet, '--random', '--dim', 'batch=1', '--threads', '1'], { encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /logits/)
})
