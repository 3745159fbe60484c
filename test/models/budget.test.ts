// SPDX-License-Identifier: Apache-2.0
// Memory-budgeted inference end to end (FlexNN): prepare PP-OCR models into packages, run them within
// budgets down to the minimum, change the budget while running, and reject bad budgets, damaged
// packages and vanished package files with the documented errors. Outputs are compared with the ONNX
// engine (every weight in memory) on the same real inputs.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { IOError, MemoryBudgetError, OptionError, PackageError } from '../../lib/errors.js'
import { BudgetedEngine, open, openPackage, type BudgetStats } from '../../lib/index.js'
import { crc32 } from '../../lib/package/crc32.js'
import { decodeHeader, encodeHeader, headerField } from '../../lib/package/format.js'
import { PackageReader } from '../../lib/package/reader.js'
import { rewritePackageMeta } from '../../lib/package/rewrite-meta.js'
import { prepare } from '../../lib/prepare/prepare.js'
import { checkOutputs, ocr, onnxOutputs, preparedPackage, tempDir, threads, type OcrModel } from '../helpers/budget.js'
import { fixtures, repoRoot } from '../helpers/data.js'

const budgetError = (minimum: number) => ({ name: 'MemoryBudgetError', code: 'ERR_FLEXPIPE_BUDGET', minimumBudget: minimum, message: new RegExp(`\\b${minimum}\\b`) })

/** A budget between the minimum and the unlimited one: weights are loaded per inference. */
const preparedBudget = (r: { minimumBudget: number; unlimitedBudget: number }): number =>
  Math.round(r.minimumBudget + 0.3 * (r.unlimitedBudget - r.minimumBudget))

async function withEngine<T>(path: string, options: Parameters<typeof openPackage>[1], fn: (e: BudgetedEngine) => Promise<T>): Promise<T> {
  const engine = await openPackage(path, { threads, ...options })
  try {
    return await fn(engine)
  } finally {
    await engine.close()
  }
}

// a. -------------------------------------------------------------------------------------------------

for (const model of [ocr.cls, ocr.rec, ocr.det]) {
  t.test(`${model.name}: a package runs at the unlimited, prepared and minimum budgets with the ONNX engine's outputs`, async (t) => {
    const unbudgeted = await preparedPackage(model)
    const B = preparedBudget(unbudgeted.report)
    const { path, report } = await preparedPackage(model, { budget: B })
    t.ok(report.minimumBudget > 0 && report.minimumBudget < B && B < report.unlimitedBudget, `minimum ${report.minimumBudget} < prepared ${B} < unlimited ${report.unlimitedBudget}`)
    t.ok(report.layers > 0, `${report.layers} layers`)
    t.equal(report.packageBytes, statSync(path).size, 'packageBytes is the size of the package file')
    // cls has no constant of 64 KiB or more (residentMaxBytes): no blobs, every weight resident, no loads.
    const blobs = report.blobs > 0
    t.equal(blobs, model !== ocr.cls, `${report.blobs} weight blobs`)
    const feeds = await model.feeds()
    const want = await onnxOutputs(model)
    for (const [label, budget] of [['unlimited', undefined], ['prepared', B], ['minimum', report.minimumBudget]] as const) {
      await withEngine(path, budget === undefined ? {} : { memoryBudget: budget }, async (engine) => {
        t.equal(engine.minimumBudget, report.minimumBudget, `${label}: the engine's minimum is the report's`)
        t.equal(engine.memoryBudget, budget ?? report.unlimitedBudget, `${label}: memoryBudget`)
        const got = await engine.infer(feeds)
        const s = engine.stats()
        // Same kernels (nothing sliced or re-kerneled): the same arithmetic, so the same bits.
        checkOutputs(t, got, want, s.slicedLayers === 0 && s.changedKernels === 0, `${label} (${s.slicedLayers} sliced layers, ${s.changedKernels} changed kernels)`)
        t.ok(s.arenaBytes <= engine.memoryBudget, `${label}: arena ${s.arenaBytes} <= budget ${engine.memoryBudget}`)
        if (budget === undefined || !blobs) {
          t.equal(s.loadBytesPerInference, 0, `${label}: nothing is loaded per inference`)
          t.equal(s.loadsPerInference, 0, `${label}: no loads`)
          t.equal(s.pinnedBytes > 0, blobs, `${label}: the blob weights are pinned (${s.pinnedBytes} bytes)`)
        } else {
          t.ok(s.loadBytesPerInference > 0, `${label}: ${s.loadBytesPerInference} bytes loaded per inference`)
          const lp = s.lastPipeline
          t.ok(lp !== undefined && lp.readMs > 0, `${label}: the last inference's lanes reported (${JSON.stringify(lp)})`)
          t.same(lp && [lp.loads, lp.bytes], [s.loadsPerInference, s.loadBytesPerInference], `${label}: it read every planned load, and only those`)
          t.ok(s.modelledMs !== undefined && s.modelledMs > 0, `${label}: the planner's simulated time of the plan (${s.modelledMs} ms)`)
        }
        const again = await engine.infer(feeds)
        checkOutputs(t, again, got, true, `${label}: a second inference`)
      })
    }
  })
}

// b. -------------------------------------------------------------------------------------------------

t.test('setMemoryBudget: keep the slicing when it fits, re-slice below the prepared budget, reject below the minimum, queue in order', async (t) => {
  const model = ocr.rec
  const B = preparedBudget((await preparedPackage(model)).report)
  const { path, report } = await preparedPackage(model, { budget: B })
  const feeds = await model.feeds()
  const want = await onnxOutputs(model)
  await withEngine(path, { memoryBudget: B }, async (engine) => {
    const before = await engine.infer(feeds)

    const slightly = B - 64 * 1024
    const kept = await engine.setMemoryBudget(slightly)
    t.equal(kept.resliced, false, `${B} -> ${slightly}: the current slicing still fits`)
    t.ok(Number.isFinite(kept.planMs) && kept.planMs >= 0, `planMs ${kept.planMs}`)
    t.ok(Number.isFinite(kept.applyMs) && kept.applyMs >= 0, `applyMs ${kept.applyMs}`)
    t.equal(engine.memoryBudget, slightly)
    checkOutputs(t, await engine.infer(feeds), before, true, 'after a budget change without re-slicing')

    const low = Math.round((report.minimumBudget + B) / 2)
    const change = await engine.setMemoryBudget(low)
    t.ok(Number.isFinite(change.planMs) && change.planMs >= 0, `to ${low}: planMs ${change.planMs}`)
    t.equal(engine.memoryBudget, low)
    const s = engine.stats()
    t.ok(s.arenaBytes <= low, `arena ${s.arenaBytes} <= ${low}`)
    checkOutputs(t, await engine.infer(feeds), want, s.slicedLayers === 0 && s.changedKernels === 0, `below the prepared budget (${low})`)

    const err = await engine.setMemoryBudget(engine.minimumBudget - 1).then(
      () => undefined,
      (e: unknown) => e,
    )
    t.ok(err instanceof MemoryBudgetError, 'below the minimum: a MemoryBudgetError')
    t.match(err, budgetError(engine.minimumBudget), 'names the minimum')
    t.equal(engine.memoryBudget, low, 'the budget is unchanged')
    checkOutputs(t, await engine.infer(feeds), want, engine.stats().slicedLayers === 0 && engine.stats().changedKernels === 0, 'still runs at the previous budget')

    // In flight: queued calls settle in call order, each inference under the plan current when it runs.
    const order: string[] = []
    const p1 = engine.infer(feeds).then((o) => (order.push('infer 1'), o))
    const p2 = engine.setMemoryBudget(report.minimumBudget).then((c) => (order.push('budget'), c))
    const p3 = engine.infer(feeds).then((o) => (order.push('infer 2'), o))
    const [o1, , o3] = await Promise.all([p1, p2, p3])
    t.same(order, ['infer 1', 'budget', 'infer 2'], 'settled in call order')
    t.equal(engine.memoryBudget, report.minimumBudget)
    const sliced = engine.stats().slicedLayers === 0 && engine.stats().changedKernels === 0
    checkOutputs(t, o1, want, false, 'the inference queued before the change')
    checkOutputs(t, o3, want, sliced, 'the inference queued after the change')
  })
})

/** Opens `path` at `budget` in a fresh Node process, touching `hog` bytes at open's first await; its stats. */
function statsInChild(path: string, budget: number, hog: number): BudgetStats & { reserve: number } {
  const script = `
    import { openPackage } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'lib', 'index.js')).href)}
    let held
    setImmediate(() => { if (${hog} > 0) held = Buffer.allocUnsafe(${hog}).fill(1) })
    const e = await openPackage(${JSON.stringify(path)}, { threads: ${threads}, memoryBudget: ${budget} })
    if (${hog} > 0 && held === undefined) throw new Error('the allocation did not run during open')
    console.log(JSON.stringify({ ...e.stats(), reserve: e.reserve }))
    await e.close()`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as BudgetStats & { reserve: number }
}

t.test('memory the process takes while an engine opens is taken from its arena, not added to its budget', async (t) => {
  const { path, report } = await preparedPackage(ocr.rec)
  const hog = 24e6
  // Room for the hog above every weight resident, so neither arena is the package's minimum one.
  const budget = report.unlimitedBudget + hog
  // Each in a fresh process: in this one, memory freed while the engine opens (earlier tests' arrays,
  // ONNX Runtime's sessions) would offset what it grows by.
  const quiet = statsInChild(path, budget, 0)
  const s = statsInChild(path, budget, hog)
  t.ok(s.openGrowthBytes >= 0.9 * hog, `open grew the process by ${s.openGrowthBytes} bytes (${hog} of them the child's)`)
  t.ok(s.reservedBytes >= s.openGrowthBytes, `reserved ${s.reservedBytes} >= the measured growth`)
  t.ok(s.arenaBytes < quiet.arenaBytes, `arena ${s.arenaBytes} < ${quiet.arenaBytes} when nothing else grew`)
  const arenaMinimum = report.minimumBudget - s.reserve // the estimated reserve sets the minimum
  t.ok(s.plannedBytes <= Math.max(arenaMinimum, budget - s.reservedBytes), `planned ${s.plannedBytes} within the budget less the measured reserve (or the minimum arena)`)
  t.ok(quiet.reservedBytes >= quiet.reserve, `quiet: reserved ${quiet.reservedBytes}, at least the estimate ${quiet.reserve}`)
})

// c. -------------------------------------------------------------------------------------------------

t.test('budgets below the minimum are rejected with a MemoryBudgetError naming the minimum', async (t) => {
  const model = ocr.cls
  const { path, report } = await preparedPackage(model)
  await t.rejects(openPackage(path, { threads, memoryBudget: report.minimumBudget - 1 }), MemoryBudgetError)
  await t.rejects(openPackage(path, { threads, memoryBudget: report.minimumBudget - 1 }), budgetError(report.minimumBudget))
  await t.rejects(openPackage(path, { threads, memoryBudget: 1024 }), budgetError(report.minimumBudget), 'far below')

  const dir = tempDir(t)
  const tooSmall = Math.floor(report.minimumBudget / 2)
  const err = await prepare(model.onnx, join(dir, 'small.fpk'), { dims: model.dims, threads, budget: tooSmall }).then(
    () => undefined,
    (e: unknown) => e,
  )
  t.ok(err instanceof MemoryBudgetError, `prepare at ${tooSmall}: a MemoryBudgetError`)
  const least = (err as MemoryBudgetError).minimumBudget!
  t.ok(least > tooSmall, `its minimum ${least} is above the budget ${tooSmall}`)
  t.match(err, { code: 'ERR_FLEXPIPE_BUDGET', message: new RegExp(`below the minimum of ${least} bytes`) })
  const ok = await prepare(model.onnx, join(dir, 'least.fpk'), { dims: model.dims, threads, budget: least })
  t.ok(ok.minimumBudget <= least, `preparing at the named minimum works (package minimum ${ok.minimumBudget})`)
})

t.test('open() reads what the file is: a package under any name opens within its budget; options not for it are named', async (t) => {
  const { path } = await preparedPackage(ocr.cls)
  const renamed = join(tempDir(t), 'cls-package.bin')
  copyFileSync(path, renamed)
  const engine = await open(renamed, { threads })
  t.teardown(() => engine.close())
  t.equal(engine.kind, 'budget', 'a memory-budget package, by its manifest')
  t.ok(engine instanceof BudgetedEngine)
  await t.rejects(open(path, { threads, maxPlans: 2 } as never), { constructor: OptionError, options: ['maxPlans'], message: /maxPlans: .* is a memory-budget package/ }, 'an ONNX-only option')
  await t.rejects(open(path, { threads, units: ['big'] } as never), { constructor: OptionError, options: ['units'], message: /unknown option units: for a memory-budget package open\(\) takes threads, io, memoryBudget/ }, 'an unknown option')
  await t.rejects(openPackage(path, { threads, preloadBytes: 1 } as never), { constructor: OptionError, options: ['preloadBytes'], message: /preloadBytes: .* is a memory-budget package/ }, 'openPackage checks them too')
  await t.rejects(open(join(tempDir(t), 'missing.fpk')), { code: 'ERR_FLEXPIPE_IO' }, 'a missing file')
  const onnxNamed = join(tempDir(t), 'package.onnx')
  copyFileSync(path, onnxNamed)
  await t.rejects(open(onnxNamed as `${string}.onnx`), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message: /is a flexpipe package, not an ONNX model; name it \*\.fpk/ }, 'a package named *.onnx')
})

// d. -------------------------------------------------------------------------------------------------

/** The package's bytes, its manifest JSON and a weight blob in the middle of the blob region. */
async function packageParts(path: string) {
  const reader = await PackageReader.open(path)
  const blobs = [...reader.blobs].sort((a, b) => a.offset - b.offset)
  await reader.close()
  return { bytes: readFileSync(path), blobs }
}

/** `bytes` with the manifest JSON edited (length and both checksums fixed). */
function editManifest(bytes: Uint8Array, edit: (m: Record<string, any>) => void, firstBlob: number): Uint8Array {
  const out = Uint8Array.from(bytes)
  const h = decodeHeader(out)
  const m = JSON.parse(Buffer.from(out.subarray(4096, 4096 + h.manifestLength)).toString('utf8'))
  edit(m)
  const json = Buffer.from(JSON.stringify(m))
  if (4096 + json.length > firstBlob) throw new Error('edited manifest does not fit before the first blob')
  out.fill(0, 4096, firstBlob)
  out.set(json, 4096)
  out.set(encodeHeader({ manifestLength: json.length, manifestCrc: crc32(json) }, crc32), 0)
  return out
}

t.test('openPackage rejects a damaged package with a PackageError naming the blob or the version', async (t) => {
  const { path } = await preparedPackage(ocr.det)
  const { bytes, blobs } = await packageParts(path)
  t.ok(blobs.length > 2, `${blobs.length} blobs to damage`)
  const dir = tempDir(t)
  let n = 0
  const write = (b: Uint8Array): string => {
    const p = join(dir, `damaged-${n++}.fpk`)
    writeFileSync(p, b)
    return p
  }
  const weight = blobs[Math.floor(blobs.length / 2)]!
  const last = blobs[blobs.length - 1]!

  t.test('a flipped byte inside a weight blob', async (t) => {
    const b = Uint8Array.from(bytes)
    b[weight.offset + Math.floor(weight.length / 2)]! ^= 0x04
    const p = write(b)
    await t.rejects(openPackage(p, { threads }), { name: 'PackageError', code: 'ERR_FLEXPIPE_PACKAGE', blob: weight.name, message: /checksum does not match/ })
    await t.rejects(openPackage(p, { threads, verify: 'all' }), PackageError)
  })

  t.test('a file cut inside its last blob', async (t) => {
    const p = write(bytes.subarray(0, last.offset + Math.floor(last.length / 2)))
    await t.rejects(openPackage(p, { threads }), { name: 'PackageError', code: 'ERR_FLEXPIPE_PACKAGE', blob: last.name, message: /truncated/ })
    await t.rejects(openPackage(p, { threads, verify: 'header' }), { code: 'ERR_FLEXPIPE_PACKAGE', blob: last.name }, 'also with verify: header')
  })

  t.test('a manifest blob entry whose offset is past the end of the file', async (t) => {
    const p = write(editManifest(bytes, (m) => (m.blobs.find((x: { name: string }) => x.name === weight.name).offset = bytes.length + 64 * 4096), blobs[0]!.offset))
    await t.rejects(openPackage(p, { threads }), { name: 'PackageError', code: 'ERR_FLEXPIPE_PACKAGE', blob: weight.name, message: /past the end of the file/ })
  })

  t.test('another format version in the header or the manifest', async (t) => {
    const header = Uint8Array.from(bytes)
    const view = new DataView(header.buffer)
    view.setUint32(headerField.version, 2, true)
    view.setUint32(headerField.headerCrc, crc32(header.subarray(0, headerField.headerCrc)), true)
    await t.rejects(openPackage(write(header), { threads }), { name: 'PackageError', code: 'ERR_FLEXPIPE_PACKAGE', message: /format version 2, but this flexpipe reads format version 1/ })
    const manifest = write(editManifest(bytes, (m) => (m.formatVersion = 2), blobs[0]!.offset))
    await t.rejects(openPackage(manifest, { threads }), { name: 'PackageError', message: /manifest is format version 2/ })
  })

  t.test('a package of another kind or for other GEMM panels', async (t) => {
    const kind = write(editManifest(bytes, (m) => (m.meta.kind = 'something-else'), blobs[0]!.offset))
    await t.rejects(openPackage(kind, { threads }), { name: 'PackageError', message: /not a model package/ })
    const nr = write(editManifest(bytes, (m) => (m.meta.gemmNr = Number(m.meta.gemmNr) * 2), blobs[0]!.offset))
    await t.rejects(openPackage(nr, { threads }), { name: 'PackageError', message: /packed for GEMM panels of \d+ floats/ })
  })

  t.test('the undamaged copy opens and runs', async (t) => {
    const p = write(bytes)
    await withEngine(p, {}, async (e) => {
      const s = e.stats()
      checkOutputs(t, await e.infer(await ocr.det.feeds()), await onnxOutputs(ocr.det), s.slicedLayers === 0 && s.changedKernels === 0, 'copy')
    })
  })
})

// e. -------------------------------------------------------------------------------------------------

t.test('a package file removed or shrunk while in use: infer rejects with an IOError, then recovers', { timeout: 60_000 }, async (t) => {
  const model = ocr.det
  const { path, report } = await preparedPackage(model)
  const dir = tempDir(t)
  const own = join(dir, 'det.fpk')
  copyFileSync(path, own)
  const original = readFileSync(own)
  const feeds = await model.feeds()
  await withEngine(own, { memoryBudget: report.minimumBudget, verify: 'header' }, async (engine) => {
    t.ok(engine.stats().loadBytesPerInference > 0, 'weights are loaded per inference')
    const before = await engine.infer(feeds)

    renameSync(own, `${own}.away`)
    await t.rejects(engine.infer(feeds), IOError, 'removed: an IOError')
    await t.rejects(engine.infer(feeds), { code: 'ERR_FLEXPIPE_IO' }, 'removed: ERR_FLEXPIPE_IO again')
    renameSync(`${own}.away`, own)
    checkOutputs(t, await engine.infer(feeds), before, true, 'after the file is back')

    truncateSync(own, Math.floor(original.length / 3))
    await t.rejects(engine.infer(feeds), { name: 'IOError', code: 'ERR_FLEXPIPE_IO' }, 'shrunk: an IOError')
    writeFileSync(own, original)
    checkOutputs(t, await engine.infer(feeds), before, true, 'after the file is rewritten')

    // A budget change while the file is away, from a plan that keeps every weight in memory: the new
    // plan's pinned weights cannot be read, nor can the old plan's to go back, so the engine is left
    // without a plan; every call says so with a typed error until a budget change plans afresh.
    await engine.setMemoryBudget(8 * report.minimumBudget)
    t.equal(engine.stats().loadBytesPerInference, 0, 'every weight pinned')
    renameSync(own, `${own}.away`)
    await t.rejects(engine.setMemoryBudget(2 * report.minimumBudget), IOError, 'removed: the budget change is an IOError')
    t.throws(() => engine.stats(), MemoryBudgetError, 'no plan: stats() says so, typed')
    await t.rejects(engine.infer(feeds), MemoryBudgetError, 'no plan: infer() says so, typed')
    renameSync(`${own}.away`, own)
    await engine.setMemoryBudget(report.minimumBudget)
    t.equal(engine.stats().memoryBudget, report.minimumBudget)
    checkOutputs(t, await engine.infer(feeds), before, true, 'a budget change with the file back plans afresh')
  })
})

// f. -------------------------------------------------------------------------------------------------

t.test('ioBandwidth throttles weight loads; direct and buffered reads give the same outputs', async (t) => {
  const model = ocr.det
  const { path, report } = await preparedPackage(model)
  const feeds = await model.feeds()
  const bandwidth = 50e6
  const outputs: Record<string, Awaited<ReturnType<BudgetedEngine['infer']>>> = {}
  for (const direct of [true, false]) {
    await withEngine(path, { memoryBudget: report.minimumBudget, ioBandwidth: bandwidth, direct }, async (engine) => {
      const bytes = engine.stats().loadBytesPerInference
      t.ok(bytes > 0, `direct ${direct}: ${bytes} bytes loaded per inference`)
      const t0 = performance.now()
      outputs[String(direct)] = await engine.infer(feeds)
      const seconds = (performance.now() - t0) / 1000
      const least = (bytes / bandwidth) * 0.95
      t.ok(seconds >= least, `direct ${direct}: one inference took ${seconds.toFixed(3)} s >= ${least.toFixed(3)} s`)
    })
  }
  checkOutputs(t, outputs.true!, outputs.false!, true, 'direct vs buffered reads')
})

t.test('readGeometry: any chunk size and queue depth gives the same outputs; a bad one is an ArgumentError', async (t) => {
  const model = ocr.det
  const { path, report } = await preparedPackage(model)
  const feeds = await model.feeds()
  let reference: Awaited<ReturnType<BudgetedEngine['infer']>> | undefined
  for (const readGeometry of [undefined, { chunkBytes: 4096, queueDepth: 1 }, { chunkBytes: 64 << 20, queueDepth: 64 }, { chunkBytes: 12288, queueDepth: 3 }]) {
    await withEngine(path, { memoryBudget: report.minimumBudget, ...(readGeometry ? { readGeometry } : {}) }, async (engine) => {
      t.ok(engine.stats().loadBytesPerInference > 0, 'weights are streamed')
      const out = await engine.infer(feeds)
      if (reference === undefined) reference = out
      else checkOutputs(t, out, reference, true, `${readGeometry?.chunkBytes} B x ${readGeometry?.queueDepth} against the default geometry`)
    })
  }
  for (const [readGeometry, message] of [
    [{ chunkBytes: 1000, queueDepth: 4 }, /readGeometry.chunkBytes: expected a multiple of 4096/],
    [{ chunkBytes: 128 << 20, queueDepth: 4 }, /readGeometry.chunkBytes/],
    [{ chunkBytes: 4096, queueDepth: 0 }, /readGeometry.queueDepth: expected an integer 1..64/],
    [{ chunkBytes: 4096, queueDepth: 65 }, /readGeometry.queueDepth/],
    [{ chunkBytes: 4096 } as never, /readGeometry.queueDepth/],
  ] as const) {
    await t.rejects(openPackage(path, { readGeometry }), { code: 'ERR_FLEXPIPE_INVALID_ARGUMENT', message }, JSON.stringify(readGeometry))
  }
})

t.test("a slow disk moves layers from Winograd's transformed filters to im2col's raw weights, outputs unchanged", async (t) => {
  const model = ocr.det
  const prepared = await preparedPackage(model)
  const { report } = prepared
  // Halfway between the minimum and every weight resident: the minimum comes from the profile measured
  // at prepare time, which on a busy machine can leave a budget a third of the way up too tight for
  // any Winograd form even on a fast disk (one full-suite run here).
  const budget = Math.round(report.minimumBudget + 0.5 * (report.unlimitedBudget - report.minimumBudget))
  // The measured profile depends on this machine's disk and load at prepare time (on a busy machine no
  // Winograd layer may pay for its larger weights), so the planner gets a fixed one: a disk too fast to
  // matter, and every Winograd form at half the time of the layer's fastest measured kernel.
  const path = join(tempDir(t), 'fixed-profile.fpk')
  copyFileSync(prepared.path, path)
  const reader = await PackageReader.open(path)
  const meta = reader.manifest.meta
  await reader.close()
  const recorded = meta.profile as { threads: number; direct: boolean; layers: Record<string, Record<string, number>> }
  t.equal(recorded.threads, threads, 'the package carries a device profile for these threads')
  const layers = Object.fromEntries(
    Object.entries(recorded.layers).map(([name, kernels]) => {
      const fastest = Math.min(...Object.values(kernels))
      return [name, Object.fromEntries(Object.entries(kernels).map(([k, ms]) => [k, k.startsWith('winograd') ? fastest / 2 : ms]))]
    }),
  )
  t.ok(Object.values(layers).some((k) => Object.keys(k).some((name) => name.startsWith('winograd'))), 'some layer has a profiled Winograd form')
  await rewritePackageMeta(path, { ...meta, profile: { ...recorded, readBandwidth: 1e12, layers } })
  const want = await onnxOutputs(model)
  const feeds = await model.feeds()
  // White box: the planner's model and the active plan (kernel options, their weight bytes, the profile).
  type Inside = {
    model: { layers: Array<{ options: Array<{ kernel: string; sliced?: { weight: { bytes: number } } }> }>; profile?: { ms: (i: number, k: string) => number | undefined } }
    active: { plan: { choices: Array<{ option: number }> } }
  }
  const fat = (e: BudgetedEngine): string[] => {
    const { model: m, active } = e as unknown as Inside
    const out: string[] = []
    active.plan.choices.forEach((c, i) => {
      const options = m.layers[i]!.options
      const bytes = (o: (typeof options)[number]) => o.sliced?.weight.bytes ?? Infinity
      const leanest = Math.min(...options.filter((o) => m.profile?.ms(i, o.kernel) !== undefined).map(bytes))
      if (bytes(options[c.option]!) > leanest) out.push(`${i}:${options[c.option]!.kernel}`)
    })
    return out
  }
  const fast = await withEngine(path, { memoryBudget: budget }, async (e) => {
    t.ok((e as unknown as Inside).model.profile !== undefined, 'the package carries a device profile for this thread count')
    const f = fat(e)
    t.ok(f.length > 0, `on a fast disk some layers keep a Winograd form (${f.join(', ')})`)
    return e.stats()
  })
  await withEngine(path, { memoryBudget: budget, ioBandwidth: 1e6 }, async (e) => {
    t.same(fat(e), [], 'at 1 MB/s every layer reads its leanest profiled weight form')
    const s = e.stats()
    t.ok(s.loadBytesPerInference < fast.loadBytesPerInference, `loads per inference ${s.loadBytesPerInference} < ${fast.loadBytesPerInference} bytes`)
    t.ok(s.changedKernels > fast.changedKernels, `${s.changedKernels} changed kernels > ${fast.changedKernels}`)
    checkOutputs(t, await e.infer(feeds), want, false, 'leaner kernels')
  })
})

/**
 * A copy of ocr.det's package whose profile has a fast disk and, per layer, each kernel at `scale` times
 * the layer's fastest measured kernel (im2col, where narrow is measured, at scale.im2col or 2), run at its prepared
 * budget through a 1 MB/s throttle: which kernels the streamed Winograd layers switch to, and the outputs.
 */
async function leanKernelsAt(t: Test, scale: Record<string, number>, name: string): Promise<{ layers: Array<{ defaultKernel: string; options: Array<{ kernel: string }> }>; run: string[]; outputs: Awaited<ReturnType<BudgetedEngine['infer']>> }> {
  const model = ocr.det
  const prepared = await preparedPackage(model)
  const budget = preparedBudget(prepared.report)
  const path = join(tempDir(t), name)
  copyFileSync(prepared.path, path)
  const reader = await PackageReader.open(path)
  const meta = reader.manifest.meta
  const blobNames = reader.manifest.blobs.map((b) => b.name)
  await reader.close()
  t.ok(blobNames.some((n) => n.endsWith('#conv_narrow_filter()')), 'the package stores narrow panels')
  const recorded = meta.profile as { layers: Record<string, Record<string, number>> }
  const layers = Object.fromEntries(
    Object.entries(recorded.layers).map(([layer, kernels]) => {
      const fastest = Math.min(...Object.values(kernels))
      return [layer, { ...Object.fromEntries(Object.entries(kernels).map(([k, ms]) => [k, fastest * (scale[k] ?? 1)])), ...('narrow' in kernels ? { im2col: fastest * (scale.im2col ?? 2) } : {}) }]
    }),
  )
  await rewritePackageMeta(path, { ...meta, profile: { ...recorded, readBandwidth: 1e12, layers } })
  type Inside = { model: { layers: Array<{ defaultKernel: string; options: Array<{ kernel: string }> }> }; active: { plan: { choices: Array<{ option: number }> } } }
  const feeds = await model.feeds()
  let result: { layers: Inside['model']['layers']; run: string[]; outputs: Awaited<ReturnType<BudgetedEngine['infer']>> } | undefined
  await withEngine(path, { memoryBudget: budget, ioBandwidth: 1e6 }, async (e) => {
    const { model: m, active } = e as unknown as Inside
    const run = active.plan.choices.map((c, i) => m.layers[i]!.options[c.option]!.kernel)
    result = { layers: m.layers, run, outputs: await e.infer(feeds) }
  })
  return result!
}

t.test("a Winograd layer's lean form is the narrow GEMM's raw-sized panels: streamed through a slow disk they replace Winograd's filters, read by the narrow GEMM or the lean Winograd kernel, outputs unchanged", async (t) => {
  const want = await onnxOutputs(ocr.det)
  // Winograd at half and narrow at three quarters of the layer's fastest kernel, the lean Winograd
  // kernels at once it: at 1 MB/s narrow is the cheapest leaner kernel.
  const narrow = await leanKernelsAt(t, { winograd63: 0.5, winograd23: 0.5, narrow: 0.75 }, 'narrow-lean.fpk')
  const winograd = narrow.layers.filter((l) => l.defaultKernel.startsWith('winograd'))
  t.ok(winograd.length > 0, `${winograd.length} Winograd layers`)
  t.ok(winograd.every((l) => l.options.some((o) => o.kernel === 'narrow')), 'each offers the narrow GEMM')
  t.ok(winograd.every((l) => l.options.some((o) => o.kernel === `${l.defaultKernel}_lean`)), 'and its lean Winograd kernel')
  t.ok(narrow.run.filter((k) => k === 'narrow').length > 0, `at 1 MB/s layers run the narrow GEMM (${narrow.run.filter((k) => k === 'narrow').length})`)
  t.notOk(narrow.run.some((k) => k.startsWith('winograd')), 'and none reads a Winograd filter')
  checkOutputs(t, narrow.outputs, want, false, 'narrow as the lean kernel')
  // The lean Winograd kernels at 0.55 and im2col at 1000 (its raw filter, smaller than the panels when
  // the output channels are not a multiple of 16, would save too little): now the lean Winograd kernels
  // are the cheapest leaner kernel, and no layer reads a transformed filter.
  const lean = await leanKernelsAt(t, { winograd63: 0.5, winograd23: 0.5, winograd63_lean: 0.55, winograd23_lean: 0.55, narrow: 0.75, im2col: 1000 }, 'winograd-lean.fpk')
  const leanRun = lean.run.filter((k) => k.endsWith('_lean')).length
  t.ok(leanRun > 0, `at 1 MB/s layers run the lean Winograd kernels (${leanRun})`)
  t.notOk(lean.run.some((k) => k === 'winograd63' || k === 'winograd23'), 'and none reads a transformed filter')
  checkOutputs(t, lean.outputs, want, false, 'lean Winograd as the lean kernel')
})

// g. -------------------------------------------------------------------------------------------------

t.test("an NCNN-Direct package (kernels: 'direct') and a package without slicing", async (t) => {
  for (const model of [ocr.cls, ocr.det] as OcrModel[]) {
    const want = await onnxOutputs(model)
    const feeds = await model.feeds()
    const auto = (await preparedPackage(model)).report
    const direct = await preparedPackage(model, { kernels: 'direct' })
    for (const budget of [undefined, direct.report.minimumBudget]) {
      await withEngine(direct.path, budget === undefined ? {} : { memoryBudget: budget }, async (e) => {
        checkOutputs(t, await e.infer(feeds), want, false, `${model.name} direct kernels at ${budget ?? 'unlimited'}`)
        t.ok(e.stats().arenaBytes <= e.memoryBudget, 'arena within the budget')
      })
    }
    const whole = await preparedPackage(model, { slicing: false })
    t.ok(whole.report.minimumBudget >= auto.minimumBudget, `${model.name} without slicing needs at least as much (${whole.report.minimumBudget} >= ${auto.minimumBudget})`)
    await withEngine(whole.path, { memoryBudget: whole.report.minimumBudget }, async (e) => {
      checkOutputs(t, await e.infer(feeds), want, false, `${model.name} without slicing at its minimum`)
      const s = e.stats()
      t.equal(s.slicedLayers, 0, 'no layer is sliced')
      t.ok(s.arenaBytes <= e.memoryBudget, 'arena within the budget')
    })
  }
})

t.test('a recorded minimum that no longer plans (stale profile) is found again at open', async (t) => {
  const model = ocr.cls
  const { path, report } = await preparedPackage(model)
  const copy = join(tempDir(t), 'stale-minimum.fpk')
  copyFileSync(path, copy)
  const reader = await PackageReader.open(copy)
  const meta = reader.manifest.meta
  await reader.close()
  t.equal(meta.minimumThreads, threads, 'the package records its minimum for these threads')
  // A minimum far below what plans, as a package re-profiled on another machine could carry.
  await rewritePackageMeta(copy, { ...meta, minimumBudget: 4096 })
  const want = await onnxOutputs(model)
  await withEngine(copy, {}, async (e) => {
    t.equal(e.minimumBudget, report.minimumBudget, 'the engine searched the minimum again instead of trusting the record')
  })
  await t.rejects(openPackage(copy, { threads, memoryBudget: report.minimumBudget - 65536 }), budgetError(report.minimumBudget), 'below it: rejected naming it')
  await withEngine(copy, { memoryBudget: report.minimumBudget }, async (e) => {
    checkOutputs(t, await e.infer(await model.feeds()), want, false, `${model.name} at the re-found minimum`)
  })
})

// h. -------------------------------------------------------------------------------------------------

t.test('CLI: prepare writes a package, run runs it within a budget, --budget on an ONNX model asks for prepare', async (t) => {
  const main = join(repoRoot, 'dist', 'lib', 'cli', 'main.js')
  const onnx = join(fixtures, 'models', 'mobilenetv2_small.onnx')
  const dir = tempDir(t)
  const fpk = join(dir, 'mobilenet.fpk')
  const prepared = execFileSync(process.execPath, [main, 'prepare', onnx, '-o', fpk, '--budget', '12MB', '--dim', 'batch=1', '--threads', String(threads)], { encoding: 'utf8' })
  t.match(prepared, fpk, 'prepare names the package')
  t.match(prepared, /weight blobs/, 'and describes it')
  const reader = await PackageReader.open(fpk, { verify: 'all' })
  t.ok(reader.blobs.length > 0, 'the package is valid')
  await reader.close()
  const ran = execFileSync(process.execPath, [main, 'run', fpk, '--budget', '12MB', '--random', '--threads', String(threads)], { encoding: 'utf8' })
  t.match(ran, /^logits: float32 \[1, 100\]/m, 'run prints the output')
  t.match(ran, /^latency: first [\d.]+ ms.*budget 12\.0 MB/m, 'and a latency line with the budget')

  // profile re-measures the device profile in place; the package stays valid and runs the same.
  const before = await PackageReader.open(fpk)
  const old = before.manifest.meta.profile as { readBandwidth: number; layers: Record<string, unknown> }
  await before.close()
  const profiled = execFileSync(process.execPath, [main, 'profile', fpk, '--threads', String(threads)], { encoding: 'utf8' })
  t.match(profiled, /profiled \d+ layers on 2 threads .* cold read bandwidth [\d.]+ MB\/s/, 'profile prints what it measured')
  const after = await PackageReader.open(fpk, { verify: 'all' })
  const now = after.manifest.meta.profile as { readBandwidth: number; layers: Record<string, unknown>; threads: number }
  await after.close()
  t.equal(now.threads, threads, 'the new profile is for the given thread count')
  t.same(Object.keys(now.layers).sort(), Object.keys(old.layers).sort(), 'and covers the same layers')
  t.ok(now.readBandwidth > 0, `with a read bandwidth (${now.readBandwidth} B/s; was ${old.readBandwidth})`)
  const again = execFileSync(process.execPath, [main, 'run', fpk, '--budget', '12MB', '--random', '--threads', String(threads)], { encoding: 'utf8' })
  t.equal(again.match(/^logits: .*$/m)?.[0], ran.match(/^logits: .*$/m)?.[0], 'the re-profiled package gives the same output summary')

  const bad = spawnSync(process.execPath, [main, 'run', onnx, '--budget', '1MB', '--random'], { encoding: 'utf8' })
  t.not(bad.status, 0, 'run x.onnx --budget exits non-zero')
  t.match(bad.stderr, /flexpipe prepare/, 'telling to run prepare')
})
