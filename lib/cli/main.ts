#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The `flexpipe` command: argument parsing and printing only; the work is the public API's.
import { parseArgs } from 'node:util'
import { FlexpipeError } from '../errors.js'
import { runDemo } from './demo.js'
import { runClassify, runElasticDemo, runPrepareElastic, runProfile } from './elastic.js'
import { runModel } from './run.js'
import { runPlan } from './plan.js'
import { modelKind } from '../api/open.js'
import { runPrepare, runProfileModel } from './prepare.js'
import { parseBytes } from './sizes.js'
import { nativeInfo } from '../native/info.js'

const usage = `usage:
  flexpipe demo [--target-ms T] [--preload 1MB]  classify bundled emails with the elastic spam encoder under a target latency
  flexpipe demo ocr                             classify text orientation with the bundled PP-OCR cls model
  flexpipe run <model.onnx> [--input name=file.json|file.ppm]... [--random] [--dim name=N]...
                            [--threads N] [--repeat N] [--output out.json]
  flexpipe prepare <model.onnx> -o <model.fpk> [--budget 100MB] [--dim name=N | name=min..max]... [--threads N] [--kernels auto|direct]
                            plan for a memory budget and write a package (pre-transformed weights)
  flexpipe run <model.fpk> [--budget 100MB|auto] [--bandwidth 257MB] ...   run a package within a memory budget (an elastic one: its full model)
  flexpipe prepare --elastic <hf-model-dir | model.onnx> -o <model.fpk> [--dev dev.jsonl]
                            shard a BERT classifier, quantize shards at 2..6 bits (+fp32), profile importance
  flexpipe profile <model.fpk> [--threads N]    re-measure a package's kernel times and cold read bandwidth on this device
  flexpipe profile <elastic.fpk> [--threads N] [--bandwidth 257MB] [--buffered] [--dev dev.jsonl [--save-importance f.json]]
                            measure this device's compute and IO delays (and shard importance) into the package
  flexpipe classify <model.fpk> --target-ms T [--preload 1MB] [--bandwidth 257MB] "text" ...
  flexpipe plan <model.onnx|model.fpk> [--budget 100MB | --target-ms T [--preload 1MB]] [--dim name=N]... [--threads N]
                            --svg out.svg [--trace out.json]   draw the engine's memory plan, trace one inference
  flexpipe info                                 show the native build (ISA, OpenMP, io_uring)`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === 'help' || command === '--help' || command === '-h' || rest.includes('--help') || rest.includes('-h')) {
    console.log(usage)
    return command === undefined ? 2 : 0
  }
  let parsed
  try {
    parsed = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      input: { type: 'string', multiple: true, default: [] },
      dim: { type: 'string', multiple: true, default: [] },
      random: { type: 'boolean', default: false },
      threads: { type: 'string' },
      repeat: { type: 'string', default: '1' },
      output: { type: 'string', short: 'o' },
      budget: { type: 'string' },
      bandwidth: { type: 'string' },
      kernels: { type: 'string' },
      elastic: { type: 'boolean', default: false },
      dev: { type: 'string' },
      'dev-limit': { type: 'string' },
      'target-ms': { type: 'string' },
      preload: { type: 'string' },
      buffered: { type: 'boolean', default: false },
      'save-importance': { type: 'string' },
      svg: { type: 'string' },
      trace: { type: 'string' },
    },
  })
  } catch (err) {
    // an unknown or malformed option: say which, then how to call
    console.error(`flexpipe: ${err instanceof Error ? err.message.split('. ')[0] : String(err)}\n${usage}`)
    return 2
  }
  const { values, positionals } = parsed
  const threads = values.threads === undefined ? undefined : Number(values.threads)
  switch (command) {
    case 'demo':
      if (positionals[0] === 'ocr') await runDemo({ threads })
      else {
        await runElasticDemo({
          ...(threads ? { threads } : {}),
          ...(values['target-ms'] ? { targetMs: Number(values['target-ms']) } : {}),
          ...(values.preload ? { preloadBytes: parseBytes(values.preload, '--preload') } : {}),
        })
      }
      return 0
    case 'profile': {
      const pkg = positionals[0]
      if (!pkg) break
      if ((await modelKind(pkg)) === 'budget') {
        await runProfileModel(pkg, threads)
        return 0
      }
      await runProfile(pkg, {
        ...(threads ? { threads } : {}),
        ...(values.bandwidth ? { bandwidth: parseBytes(values.bandwidth, '--bandwidth') } : {}),
        buffered: values.buffered,
        ...(values.dev ? { dev: values.dev } : {}),
        ...(values['dev-limit'] ? { devLimit: Number(values['dev-limit']) } : {}),
        ...(values['save-importance'] ? { saveImportance: values['save-importance'] } : {}),
      })
      return 0
    }
    case 'classify': {
      const pkg = positionals[0]
      if (!pkg || values['target-ms'] === undefined) break
      await runClassify(pkg, positionals.slice(1), {
        targetMs: Number(values['target-ms']),
        ...(values.preload ? { preloadBytes: parseBytes(values.preload, '--preload') } : {}),
        ...(threads ? { threads } : {}),
        ...(values.bandwidth ? { bandwidth: parseBytes(values.bandwidth, '--bandwidth') } : {}),
        buffered: values.buffered,
      })
      return 0
    }
    case 'run': {
      const model = positionals[0]
      if (!model) break
      await runModel(model, {
        inputs: values.input,
        dims: values.dim,
        random: values.random,
        threads,
        repeat: Number(values.repeat),
        output: values.output,
        ...(values.budget === undefined ? {} : { budget: values.budget === 'auto' ? 'auto' : parseBytes(values.budget, '--budget') }),
        ...(values.bandwidth === undefined ? {} : { bandwidth: parseBytes(values.bandwidth, '--bandwidth') }),
      })
      return 0
    }
    case 'prepare': {
      const model = positionals[0]
      if (!model) break
      if (values.elastic) {
        await runPrepareElastic(model, values.output, values.dev, threads)
        return 0
      }
      await runPrepare(model, { output: values.output, budget: values.budget, dims: values.dim, threads, kernels: values.kernels })
      return 0
    }
    case 'plan': {
      const model = positionals[0]
      if (!model) break
      await runPlan(model, {
        dims: values.dim,
        threads,
        buffered: values.buffered,
        ...(values.svg === undefined ? {} : { svg: values.svg }),
        ...(values.trace === undefined ? {} : { trace: values.trace }),
        ...(values.budget === undefined ? {} : { budget: parseBytes(values.budget, '--budget') }),
        ...(values.bandwidth === undefined ? {} : { bandwidth: parseBytes(values.bandwidth, '--bandwidth') }),
        ...(values['target-ms'] === undefined ? {} : { targetMs: Number(values['target-ms']) }),
        ...(values.preload === undefined ? {} : { preloadBytes: parseBytes(values.preload, '--preload') }),
      })
      return 0
    }
    case 'info':
      console.log(JSON.stringify(nativeInfo(), null, 2))
      return 0
  }
  console.error(usage)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof FlexpipeError) console.error(`flexpipe: ${err.message} [${err.code}]`)
    else console.error(err)
    process.exit(1)
  },
)
