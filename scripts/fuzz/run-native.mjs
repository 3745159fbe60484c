#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs each native libFuzzer target (scripts/fuzz/build-native.mjs builds them) on its committed corpus
// (test/fuzz/corpus/<target without _fuzz>/: seeds and every input that once crashed), then fuzzes for
// --seconds more (default 60) from a scratch copy, so that new inputs are not committed by accident.
// Prints TAP: one point per target, with its executions; a crash, leak or timeout fails it and names
// the input libFuzzer wrote (add it to the corpus once fixed: it is then a regression test).
//
//   node scripts/fuzz/run-native.mjs [--seconds 60] [target ...]
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { root, sourcesOf } from '../native-sources.mjs'

const args = process.argv.slice(2)
const at = args.indexOf('--seconds')
const seconds = at < 0 ? 60 : Number(args.splice(at, 2)[1])
const targets = args.length > 0 ? args : sourcesOf('fuzz').map((f) => basename(f, '.cc'))
let failed = 0
console.log(`1..${targets.length}`)
targets.forEach((t, i) => {
  const corpus = join(root, 'test', 'fuzz', 'corpus', t.replace(/_fuzz$/, ''))
  const scratch = mkdtempSync(join(tmpdir(), `${t}-`))
  cpSync(corpus, scratch, { recursive: true })
  const r = spawnSync(join(root, '.cache', 'fuzz', t), [scratch, `-max_total_time=${seconds}`, '-rss_limit_mb=2048', '-timeout=10', `-artifact_prefix=${scratch}/`, '-print_final_stats=1'], { encoding: 'utf8' })
  const log = `${r.stdout}${r.stderr}`
  const runs = /stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ?? '?'
  const seeds = readdirSync(corpus).length
  if (r.status === 0) console.log(`ok ${i + 1} - ${t}: ${runs} executions in ${seconds} s from ${seeds} committed inputs, no crash, leak or timeout`)
  else {
    failed++
    const artifact = /Test unit written to (\S+)/.exec(log)?.[1] ?? '(none written)'
    console.log(`not ok ${i + 1} - ${t}: exit ${r.status} after ${runs} executions; input ${artifact}`)
    console.log(log.split('\n').filter((l) => /ERROR|SUMMARY|#\d+ 0x/.test(l)).slice(0, 12).map((l) => `  # ${l}`).join('\n'))
  }
})
process.exitCode = failed === 0 ? 0 : 1
