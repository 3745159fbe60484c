// SPDX-License-Identifier: Apache-2.0
// A binary that does not load says what to install: the advice built from the loader's message, and the
// typed error a process gets when the addon cannot be loaded at all.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { loadFailureAdvice } from '../../lib/native/binding.js'
import { packageRoot } from '../../lib/package-root.js'

t.test('the advice names the package a missing library comes from', async (t) => {
  const dlopen = (lib: string): string => `${lib}: cannot open shared object file: No such file or directory`
  t.match(loadFailureAdvice(dlopen('libgomp.so.1')), /needs libgomp\.so\.1.*apt-get install libgomp1/)
  t.match(loadFailureAdvice(dlopen('libstdc++.so.6')), /apt-get install libstdc\+\+6/)
  t.match(loadFailureAdvice(dlopen('libfoo.so.3')), /needs libfoo\.so\.3, which this system does not have, or rebuild/)
  t.match(loadFailureAdvice("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by flexpipe.node)"), /newer glibc.*GLIBC_2\.38.*npm rebuild/)
  t.match(loadFailureAdvice('No native build was found for platform=linux arch=riscv64\n    loaded from: x'), /no prebuilt binary matched.*No native build was found for platform=linux arch=riscv64$/)
})

t.test('a process whose addon does not load gets an AddonLoadError with the advice', async (t) => {
  const script = `import { open } from ${JSON.stringify(join(packageRoot, 'dist', 'flexpipe.js'))}
try { await open(${JSON.stringify(join(packageRoot, 'test', 'fixtures', 'models', 'vgg_small.onnx'))}) } catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })) }`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, FLEXPIPE_ADDON: '/nonexistent/flexpipe.node' } })
  const got = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { name?: string; code?: string; message?: string }
  t.equal(got.name, 'AddonLoadError')
  t.match(got.message, /FLEXPIPE_ADDON=\/nonexistent\/flexpipe\.node.*Cannot find module/)
  t.ok(got.code?.startsWith('ERR_FLEXPIPE'), `a code: ${got.code}`)
})
