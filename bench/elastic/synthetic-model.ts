// SPDX-License-Identifier: Apache-2.0
// `--model synthetic`: a random BERT classifier of the fixture's shape (H 256, 6 layers, 8 heads,
// FFN 1024, 128 positions; the test helpers' tiny vocabulary) and a dev set of random texts labelled
// by the model's own fp32 prediction, half of each label. It checks the harness before the trained
// fixture exists: the full model scores 100% by construction, so only the numbers' shape means anything.
import { existsSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { seededRandom } from '../../lib/cli/inputs.js'
import { residentPlan } from '../../lib/prepare/shard-importance.js'
import { readElasticPackage } from '../../lib/package/elastic-manifest.js'
import { prepareElastic } from '../../lib/prepare/prepare-elastic.js'
import { ElasticRunner } from '../../lib/runtime/elastic-runner.js'
import { TextEncoder } from '../../lib/model/tokenize.js'
import { tinyVocab, writeTinyEncoder } from '../../test/helpers/tiny-encoder.js'
import { fitIds } from './dev-inputs.js'

const shape = { hidden: 256, layers: 6, heads: 8, ffn: 1024, maxPositions: 128 }
const devSize = 200

function randomText(r: () => number): string {
  const words = tinyVocab.filter((w) => /^[a-z]+$/.test(w))
  const n = 8 + Math.floor(r() * 100)
  return Array.from({ length: n }, () => words[Math.floor(r() * words.length)]!).join(' ')
}

/** Writes the folder (once) and returns its path. */
export async function syntheticModel(dir: string, log: (line: string) => void): Promise<string> {
  if (existsSync(join(dir, 'dev.jsonl'))) return dir
  log(`writing a synthetic model and dev set into ${dir}`)
  await writeTinyEncoder(dir, shape, 11)
  const tmp = join(dir, 'label.fpk')
  await prepareElastic(dir, tmp, { bitwidths: [32] })
  const pkg = await readElasticPackage(tmp)
  const encoder = new TextEncoder(pkg.tokenizer, pkg.config.maxPositions)
  const x = await ElasticRunner.open(tmp, pkg.config, pkg.blobs, { threads: 2, io: 'auto' })
  const byLabel: string[][] = [[], []]
  try {
    const { layers, heads } = pkg.config
    await x.apply(residentPlan(layers, heads, encoder.maxLength, Array.from({ length: layers }, () => new Array<number>(heads).fill(32))))
    const r = seededRandom(5)
    for (let i = 0; i < 10 * devSize && byLabel.some((l) => l.length < devSize / 2); i++) {
      const text = randomText(r)
      const { logits } = await x.run(fitIds(encoder.encode(text).ids, encoder.maxLength))
      const label = logits[1]! > logits[0]! ? 1 : 0
      if (byLabel[label]!.length < devSize / 2) byLabel[label]!.push(text)
    }
  } finally {
    x.dispose()
    await rm(tmp, { force: true })
  }
  // Interleaved, so that any --dev-limit prefix holds both labels.
  const lines: string[] = []
  for (let i = 0; i < devSize / 2; i++) {
    byLabel.forEach((texts, label) => {
      if (i < texts.length) lines.push(JSON.stringify({ text: texts[i], label }))
    })
  }
  await writeFile(join(dir, 'dev.jsonl'), `${lines.join('\n')}\n`)
  log(`  dev set: ${byLabel[0]!.length} ham, ${byLabel[1]!.length} spam (labelled by the model itself)`)
  return dir
}
