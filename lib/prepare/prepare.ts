// SPDX-License-Identifier: Apache-2.0
// prepare(): ONNX model -> package (.fpk) for memory-budgeted inference (FlexNN's offline stage).
//
//   1. import, fuse activations, fix the input dims (symbolic dims from `dims`), infer shapes and fold
//      constant subgraphs: the planned graph;
//   2. list each layer's kernel options and plan for the budget (bottleneck-aware slicing, kernel choice
//      Winograd -> im2col + GEMM -> direct, preload-aware memory plan; lib/plan/budget/plan-budget.ts)
//      to learn which storage forms the kernels need: the forms chosen without a budget and at the
//      budget, plus every convolution's raw weight (the im2col/direct fallback that lets the runtime
//      re-slice below the prepared budget);
//   3. pre-transform the weights (packed GEMM panels, Winograd filters) and write the package: the graph
//      (small constants inline), one 4 KiB-aligned, checksummed blob per (constant, form), and the
//      smallest feasible budget.
// Slicing itself is not frozen into the package: every form is stored so that any channel slice is one
// contiguous byte range, and the runtime slices for whatever budget it gets (>= the recorded minimum).
import { stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { basename } from 'node:path'
import { ArgumentError, MemoryBudgetError } from '../errors.js'
import { fuseActivations } from '../model/fuse-activations.js'
import { fuseConvDepthwise } from '../model/fuse-conv-depthwise.js'
import { fuseConvPools } from '../model/fuse-conv-pool.js'
import { fuseResidualAdds } from '../model/fuse-residual.js'
import { inferGraph, type InferredGraph } from '../model/infer-graph.js'
import { bindInputDims, inputSymbols } from '../model/bind-input-dims.js'
import { checkDimRange } from '../plan/dynamic/shape-buckets.js'
import { valueBytes, type Graph, type TensorData, type ValueInfo } from '../model/ir.js'
import { loadOnnx } from '../model/onnx-import.js'
import { hostTensor } from '../model/values.js'
import { binding } from '../native/binding.js'
import { PackageWriter, padToBlob, rewritePackageMeta, type BlobEntry } from '../package/index.js'
import { profilePackage } from './measure-budget-device.js'
import { constantHost, prepackKey } from '../model/constant-data.js'
import { tapWindowInts, tapWindowOfPrepack } from '../model/ops/conv-taps.js'
import { windowOfConvCall } from '../model/ops/nn-conv.js'
import { runPrepack } from '../runtime/prepack.js'
import { checkSupported } from '../model/ops/registry.js'
import { foldNative } from '../runtime/fold-native.js'
import { budgetModel } from '../plan/budget/budget-model.js'
import { budgetReserve } from '../plan/budget/budget-reserve.js'
import { planProfile } from '../profile/budget-device.js'
import { isConstantValue, residentMaxBytes } from '../plan/budget/layer-options.js'
import { directConvolutionOnly } from '../plan/budget/kernel-options.js'
import { minimumBudget, planForBudget, unlimitedBudget, type BudgetModel, type PlanPolicy } from '../plan/budget/plan-budget.js'
import { encodePackageGraph, type StoredConstant } from '../package/graph-codec.js'
import { formBytes, formShape, parseFormKey } from '../model/forms.js'

export interface PrepareOptions {
  /** Memory budget (bytes) the package must run in; the package then serves every budget >= it. */
  readonly budget?: number
  /**
   * Symbolic input dims: a value fixes a dim (`{ batch: 1 }`); a range `[min, max]` keeps it symbolic,
   * and the package then runs every value in the range inside one budget, planned at the range's max
   * (`{ seq_len: [8, 128] }`).
   */
  readonly dims?: Readonly<Record<string, number | readonly [number, number]>>
  /** 'direct': every convolution uses direct convolution and no stem absorbs its max pool (the NCNN-Direct baseline). Default 'auto'. */
  readonly kernels?: 'auto' | 'direct'
  /** Allow weight/input slicing and a stem + max pool in bands of rows (default true; false gives the On-Demand baseline's whole layers). */
  readonly slicing?: boolean
  /** Threads the engine will run with (workspace sizes depend on it). Default: cores, at most 4. */
  readonly threads?: number
  /**
   * Measure the device profile (kernel times per layer, cold read bandwidth) on the written package and
   * record it (default true): the planner then orders kernels by measured time and trades compute for
   * IO when loading bounds the latency. Costs about six inferences with every weight resident.
   */
  readonly profile?: boolean
  /** Progress of the weight transform and write stage. */
  readonly onProgress?: (done: number, total: number, what: string) => void
}

export interface PrepareReport {
  readonly minimumBudget: number
  readonly unlimitedBudget: number
  readonly layers: number
  /** Layers sliced (or given a leaner kernel) at the prepared budget. */
  readonly slicedLayers: number
  readonly blobs: number
  readonly packageBytes: number
  readonly ms: number
}

const producer = 'flexpipe 0.1.0 prepare'

/** The `dims` option: fixed values, and the declared ranges (kept symbolic in the package). */
function checkDims(graph: Graph, dims: PrepareOptions['dims'] = {}): { fixed: Map<string, number>; ranges: Map<string, readonly [number, number]> } {
  const symbols = new Set(inputSymbols(graph))
  const fixed = new Map<string, number>()
  const ranges = new Map<string, readonly [number, number]>()
  for (const [name, v] of Object.entries(dims)) {
    if (!symbols.has(name)) throw new ArgumentError(`dims: the model has no symbolic input dim '${name}'; ${symbols.size === 0 ? 'it has none' : `its symbolic dims are ${[...symbols].join(', ')}`}`)
    if (Array.isArray(v)) {
      const r = checkDimRange(name, { min: v[0] as number, max: v[1] as number })
      ranges.set(name, [r.min, r.max])
    } else if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1) fixed.set(name, v)
    else throw new ArgumentError(`dims.${name}: expected a positive integer or a range [min, max], got ${JSON.stringify(v)}`)
  }
  for (const d of graph.inputs) {
    if (d.dims === undefined) throw new ArgumentError(`input '${d.name}' has no declared shape; prepare needs its dims`)
    for (const x of d.dims) {
      if (typeof x === 'string' && !fixed.has(x) && !ranges.has(x)) {
        throw new ArgumentError(`input '${d.name}' has the symbolic dim '${x}': give its value or its range, e.g. --dim ${x}=1 or --dim ${x}=1..8 (dims: { ${JSON.stringify(x)}: 1 } or { ${JSON.stringify(x)}: [1, 8] })`)
      }
    }
  }
  return { fixed, ranges }
}

/**
 * The planned graph of a package with dim ranges: the fused graph (planned at the ceiling) with the
 * inputs as declared, shapes inferred symbolically so that only weight-only subgraphs fold.
 */
function symbolicPlannedGraph(fused: Graph, declared: Graph, foldCache: Map<string, ValueInfo[]>): { graph: Graph; constants: Map<string, ValueInfo> } {
  const graph = { ...fused, inputs: declared.inputs }
  const inputs = new Map<string, ValueInfo>(graph.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
  const inferred = inferGraph(graph, inputs, { concrete: false, fold: foldNative, foldCache })
  // A node stays unless every output folded to a constant (shape arithmetic on symbolic dims stays:
  // the engine evaluates it at each shape).
  const folded = (name: string): boolean => name === '' || isConstantValue(inferred.values.get(name))
  const nodes = graph.nodes.filter((n) => !n.outputs.every(folded))
  const constants = new Map<string, ValueInfo>()
  for (const name of [...nodes.flatMap((n) => n.inputs), ...graph.outputs.map((o) => o.name)]) {
    const v = name === '' ? undefined : inferred.values.get(name)
    if (v !== undefined && isConstantValue(v)) constants.set(name, v)
  }
  const outputs = graph.outputs.map((o) => ({ ...o, dims: inferred.values.get(o.name)!.dims }))
  return { graph: { ...graph, nodes, outputs, initializers: new Map() }, constants }
}

/** The planned graph: the nodes that still run, the inputs fixed, constants split inline / stored. */
function plannedGraph(graph: Graph, inferred: InferredGraph): { graph: Graph; constants: Map<string, ValueInfo> } {
  const constants = new Map<string, ValueInfo>()
  for (const step of inferred.steps) {
    for (const name of step.node.inputs) {
      const v = name === '' ? undefined : inferred.values.get(name)
      if (v !== undefined && isConstantValue(v)) constants.set(name, v)
    }
  }
  for (const o of graph.outputs) {
    const v = inferred.values.get(o.name)
    if (v !== undefined && isConstantValue(v)) constants.set(o.name, v)
  }
  const outputs = graph.outputs.map((o) => ({ ...o, dims: inferred.values.get(o.name)!.dims }))
  return { graph: { ...graph, nodes: inferred.steps.map((s) => s.node), outputs, initializers: new Map() }, constants }
}

/** Prepares `modelPath` (ONNX) into the package `outPath`. */
export async function prepare(modelPath: string, outPath: string, options: PrepareOptions = {}): Promise<PrepareReport> {
  const t0 = performance.now()
  if (options.budget !== undefined && !(Number.isSafeInteger(options.budget) && options.budget > 0)) {
    throw new ArgumentError(`budget: expected a positive integer number of bytes, got ${options.budget}`)
  }
  const kernels = options.kernels ?? 'auto'
  if (kernels !== 'auto' && kernels !== 'direct') throw new ArgumentError(`kernels: expected 'auto' or 'direct', got ${String(kernels)}`)
  const threads = options.threads ?? Math.min(availableParallelism(), 4)
  const source = fuseActivations(await loadOnnx(modelPath))
  checkSupported(source)
  const declared = checkDims(source, options.dims)
  const ranged = declared.ranges.size > 0
  // Planned at each range's max (the ceiling): every smaller value fits in the plan's memory.
  const ceiling = new Map([...declared.fixed, ...[...declared.ranges].map(([n, r]) => [n, r[1]] as const)])
  const atCeiling = (g: Graph): Graph => bindInputDims(g, ceiling)
  const unfused = atCeiling(source)
  const inputs = new Map<string, ValueInfo>(unfused.inputs.map((d) => [d.name, { dtype: d.dtype, dims: d.dims! }]))
  const foldCache = new Map<string, ValueInfo[]>()
  // Residual Adds fuse into their Conv where the shapes say so (then a Relu after them into the Conv);
  // with slicing, a stem and its max pool, then a conv and the depthwise after it, fuse into bands of
  // rows (not for the On-Demand baseline, nor for direct convolutions only: the NCNN-Direct baseline).
  const residual = fuseActivations(fuseResidualAdds(unfused, inferGraph(unfused, inputs, { concrete: true, fold: foldNative, foldCache }).values))
  const bands = options.slicing !== false && kernels === 'auto'
  const pooled = bands ? fuseConvPools(residual, inferGraph(residual, inputs, { concrete: true, fold: foldNative, foldCache }).values) : residual
  const fixed = bands ? fuseConvDepthwise(pooled, inferGraph(pooled, inputs, { concrete: true, fold: foldNative, foldCache }).values) : pooled
  const inferred = inferGraph(fixed, inputs, { concrete: true, fold: foldNative, foldCache })
  // With ranges, the package's graph keeps their dims symbolic: only what depends on the weights alone
  // folds; what depends on the input shapes is computed per shape by the engine.
  const planned = !ranged ? plannedGraph(fixed, inferred) : symbolicPlannedGraph(fixed, bindInputDims(source, declared.fixed), foldCache)
  const nr = binding().prepack('gemm_pack_b', { dtype: 1, dims: [1, 1], data: new Float32Array(1) }, [0]).dims[2]!

  // Every form any kernel option could read, as virtual blobs, to plan before transforming anything.
  const large = new Map([...planned.constants].filter(([, v]) => valueBytes(v) >= residentMaxBytes))
  const virtual = new Map<string, BlobEntry>()
  const stored = new Map<string, { dtype: StoredConstant['dtype']; dims: number[]; forms: Record<string, string> }>()
  const blobName = (name: string, form: string): string => (form === 'raw' ? name : `${name}${form}`)
  // Forms that depend on the layer, not only on the weight: the grouped kernel's filter packed for the
  // Conv's group count, and filters cut to their live taps (conv-taps.ts), in the form the default
  // kernel reads and in the raw and narrow forms the planner's other kernels read.
  const layerForms = new Map<string, Set<string>>()
  const addForm = (name: string | undefined, form: string): void => {
    if (name !== undefined) layerForms.set(name, (layerForms.get(name) ?? new Set<string>()).add(form))
  }
  for (const step of inferred.steps) {
    const call = step.kernel
    if (call?.op !== 'Conv') continue
    for (const p of call.prepack ?? []) {
      const name = step.node.inputs[p.input]
      addForm(name, prepackKey(p))
      const window = tapWindowOfPrepack(p)
      if (window === undefined) continue
      for (const transform of ['conv_window', 'conv_narrow_filter']) addForm(name, prepackKey({ input: p.input, transform, ints: tapWindowInts(window) }))
    }
  }
  const formsOf = (name: string, v: ValueInfo): Record<string, string> => {
    const forms: Record<string, string> = {}
    for (const form of ['raw', '#winograd_f63_filter()', '#winograd_f23_filter()', '#conv_narrow_filter()', '#gemm_pack_b(0)', '#gemm_pack_b(1)', ...(layerForms.get(name) ?? [])]) {
      const convWeight = v.dims.length >= 3 && v.dims.length <= 5
      const fits = form === 'raw' || (v.dims.length === 4 && (form.startsWith('#winograd') || form.startsWith('#grouped') || form.startsWith('#conv_window') || form.startsWith('#conv_taps'))) || (convWeight && form.startsWith('#conv_narrow')) || (v.dims.length === 2 && form.startsWith('#gemm'))
      const shape = fits ? formShape(v.dtype, v.dims as number[], form, nr) : undefined
      if (shape === undefined) continue
      const b = blobName(name, form)
      const length = formBytes(shape)
      virtual.set(b, { name: b, offset: 0, length, paddedLength: padToBlob(length), crc32: 0, dtype: shape.dtype, dims: shape.dims })
      forms[form] = b
    }
    return forms
  }
  for (const [name, v] of large) stored.set(name, { dtype: v.dtype, dims: v.dims as number[], forms: formsOf(name, v) })
  // budgetModel re-infers the planned graph; its constants resolve to the virtual forms.
  const withForms = budgetModel(atCeiling(withConstants(planned.graph, planned.constants)), stored, virtual, nr, threads, foldNative)
  const policy: PlanPolicy = { preload: true, pin: true, staticPlan: true, slicing: options.slicing ?? true }
  const direct = kernels === 'direct'
  // The model as the engine plans it (only direct convolution in an NCNN-Direct package).
  const asEngine = <M extends BudgetModel>(m: M): M => (direct ? directConvolutionOnly(m) : m)
  const restrict = asEngine(withForms)
  const unlimited = planForBudget(restrict, unlimitedBudget(restrict, policy), policy)
  const bookkeeping = budgetReserve(restrict, ranged)
  const atBudget = options.budget === undefined ? undefined : planOrExplain(restrict, options.budget, bookkeeping, policy)

  // The forms to write: chosen ones, plus raw conv weights (the lean fallback) and, for Winograd layers,
  // the narrow GEMM's panels (the lean form streamed weights switch to when reads bound the latency,
  // read by the lean Winograd kernel or the narrow GEMM).
  const needed = new Set<string>()
  const addChosen = (p: typeof unlimited): void => {
    for (const r of p.build.resident) if (r.source.kind === 'blob') needed.add(r.source.blob)
    for (const l of p.build.loads) if (l !== undefined) needed.add(l.blob)
  }
  addChosen(unlimited)
  if (atBudget !== undefined) addChosen(atBudget)
  for (const layer of restrict.layers) {
    if (layer.step.node.opType !== 'Conv') continue
    const w = layer.step.node.inputs[1] ?? ''
    const s = stored.get(w)
    // the raw filter, or for one cut to its live taps (conv-taps.ts) the raw cut
    const window = layer.step.kernel === undefined ? undefined : windowOfConvCall(layer.step.kernel)
    const raw = window === undefined ? s?.forms.raw : s?.forms[prepackKey({ input: 1, transform: 'conv_window', ints: tapWindowInts(window) })]
    if (raw !== undefined) needed.add(raw)
    const narrow = s?.forms['#conv_narrow_filter()']
    if (narrow !== undefined && layer.defaultKernel.startsWith('winograd') && layer.options.some((o) => o.sliced?.form === '#conv_narrow_filter()')) needed.add(narrow)
  }
  // With ranges, a large constant no kernel reads (one that feeds a node computed per shape, such as a
  // position-embedding table sliced to the length) is stored raw rather than inline in the manifest:
  // the engine reads it as a weight of that node instead of holding it in its heap.
  if (ranged) for (const s of stored.values()) if (!Object.values(s.forms).some((b) => needed.has(b)) && s.forms.raw !== undefined) needed.add(s.forms.raw)
  for (const s of stored.values()) for (const [form, b] of Object.entries(s.forms)) if (!needed.has(b)) delete s.forms[form]
  const storedFinal = new Map([...stored].filter(([, s]) => Object.keys(s.forms).length > 0))
  const finalBlobs = new Map([...virtual].filter(([b]) => needed.has(b)))
  const packageModel = budgetModel(atCeiling(withConstants(planned.graph, planned.constants)), storedFinal, finalBlobs, nr, threads, foldNative)
  const profiling = options.profile ?? true

  // Inline constants: small ones, and large ones no kernel reads from a blob (outputs, shape inputs).
  const inline = new Map<string, TensorData>()
  for (const [name, v] of planned.constants) {
    if (storedFinal.has(name)) continue
    inline.set(name, constantHost(v))
  }
  const graph = encodePackageGraph(planned.graph, inline, storedFinal)
  const graphBytes = Buffer.byteLength(JSON.stringify(graph))
  // Room for the manifest: the graph, ~300 bytes per blob entry, and the profile added after writing.
  const manifestReserve = padToBlob(graphBytes + 300 * finalBlobs.size + 64 * restrict.layers.length * 4 + (256 << 10))
  const writer = await PackageWriter.create(outPath, { producer, manifestReserve })
  try {
    const jobs = [...storedFinal].flatMap(([name, s]) => Object.entries(s.forms).map(([form, blob]) => ({ name, form, blob })))
    let done = 0
    const hosts = new Map<string, TensorData>()
    for (const job of jobs) {
      options.onProgress?.(done, jobs.length, job.blob)
      let host = hosts.get(job.name)
      if (host === undefined) {
        host = constantHost(planned.constants.get(job.name)!)
        if (Object.keys(storedFinal.get(job.name)!.forms).length > 1) hosts.set(job.name, host)
      }
      const p = parseFormKey(job.form)
      const data = p === undefined ? host : runPrepack(host, { input: 0, transform: p.transform, ints: p.ints }, job.name)
      const v = finalBlobs.get(job.blob)!
      await writer.addBlob(job.blob, data.data, { dtype: data.dtype, dims: data.dims.slice(), kind: job.form === 'raw' ? 'weight' : 'weight-transformed', group: job.name })
      if (v.dims !== undefined && data.dims.join() !== v.dims.join()) throw new Error(`prepare: form ${job.form} of '${job.name}' has dims [${data.dims}], expected [${v.dims}]`)
      done++
      if (done === jobs.length || hosts.size > 64) hosts.clear()
    }
    options.onProgress?.(jobs.length, jobs.length, 'manifest')
    const meta = {
      kind: 'flexpipe-model',
      source: basename(modelPath),
      gemmNr: nr,
      isa: binding().info().isa,
      kernels,
      slicing: policy.slicing,
      preparedBudget: options.budget ?? null,
      // The smallest arena (a user's budget covers it and the engine's bookkeeping, bookkeepingBytes).
      // With a profile the engine orders kernels by it, so the minimum is searched once that is measured.
      minimumBudget: profiling ? null : minimumBudget(asEngine(packageModel), policy),
      minimumThreads: threads,
      ...(ranged ? { dims: Object.fromEntries(declared.ranges) } : {}),
    }
    const manifest = await writer.finish(graph, meta)
    let unlimitedArena = unlimited.budget
    let minimumArena = meta.minimumBudget ?? 0
    if (profiling) {
      options.onProgress?.(jobs.length, jobs.length, 'profile')
      const profile = await profilePackage(outPath, threads)
      // The engine orders kernels by the profile, so its smallest and every-weight-resident budgets follow
      // the profile too (a minimum found with another order may not plan).
      const profiled = asEngine(budgetModel(atCeiling(withConstants(planned.graph, planned.constants)), storedFinal, finalBlobs, nr, threads, foldNative, planProfile(profile, threads)))
      unlimitedArena = unlimitedBudget(profiled, policy)
      minimumArena = minimumBudget(profiled, policy)
      await rewritePackageMeta(outPath, { ...meta, minimumBudget: minimumArena, profile })
    }
    void manifest
    // The whole file: header, manifest (with the inline constants) and blobs.
    const end = (await stat(outPath)).size
    return {
      minimumBudget: minimumArena + budgetReserve(packageModel, ranged),
      unlimitedBudget: unlimitedArena + bookkeeping,
      layers: restrict.layers.length,
      slicedLayers: atBudget === undefined ? 0 : atBudget.choices.filter((c, i) => c.weightSlices > 1 || restrict.layers[i]!.options[c.option]!.kernel !== restrict.layers[i]!.defaultKernel || c.inputSlices !== restrict.layers[i]!.defaultInputSlices).length,
      blobs: manifest.blobs.length,
      packageBytes: end,
      ms: performance.now() - t0,
    }
  } catch (err) {
    await writer.abort()
    throw err
  }
}

/** The planned graph with its constants as initializers (host data stays in memory until written). */
function withConstants(graph: Graph, constants: ReadonlyMap<string, ValueInfo>): Graph {
  const initializers = new Map<string, TensorData | NonNullable<ValueInfo['tensor']>>()
  for (const [name, v] of constants) {
    const t = v.tensor ?? hostTensor(v)
    if (t !== undefined) initializers.set(name, t)
  }
  return { ...graph, initializers }
}

/** The plan for a user's budget (its arena: the budget minus the engine's bookkeeping), or an error naming the minimum. */
function planOrExplain(m: Parameters<typeof planForBudget>[0], budget: number, bookkeeping: number, policy: PlanPolicy): ReturnType<typeof planForBudget> {
  try {
    if (budget <= bookkeeping) throw new MemoryBudgetError(`budget ${budget} is below the engine's bookkeeping`)
    return planForBudget(m, budget - bookkeeping, policy)
  } catch (err) {
    if (!(err instanceof MemoryBudgetError)) throw err
    const least = minimumBudget(m, policy) + bookkeeping
    throw new MemoryBudgetError(`--budget ${budget} bytes is below the minimum of ${least} bytes for this model; prepare with --budget ${least} or more`, least)
  }
}
