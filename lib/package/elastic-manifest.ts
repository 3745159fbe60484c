// SPDX-License-Identifier: Apache-2.0
// The manifest of an elastic package (written by lib/prepare/prepare-elastic.ts): shard blob names, the
// digest of the shard content a device profile belongs to, and the checked encoder it describes.
import { ArgumentError, PackageError } from '../errors.js'
import { parseEncoderConfig, type EncoderConfig } from '../model/encoder-config.js'
import { crc32 } from './crc32.js'
import type { BlobEntry } from './format.js'
import { PackageReader } from './reader.js'

/** The blob of shard `shard` of layer `layer` stored at `bits` bits (32: float32). */
export const shardBlobName = (layer: number, shard: number, bits: number): string => `L${layer}.S${shard}.b${bits}`

/** The CRC digest of a package's shard blobs (identifies the content a device profile was measured on). */
export function shardDigest(blobs: readonly BlobEntry[]): string {
  const crcs = new Uint32Array(blobs.filter((b) => b.kind === 'shard').map((b) => b.crc32))
  return crc32(new Uint8Array(crcs.buffer)).toString(16).padStart(8, '0')
}

export interface ElasticPackage {
  readonly config: EncoderConfig
  readonly tokenizer: unknown
  readonly blobs: Map<string, BlobEntry>
  readonly meta: Readonly<Record<string, unknown>>
  readonly digest: string
}

/** Reads and checks an elastic package's manifest. */
export async function readElasticPackage(path: string): Promise<ElasticPackage> {
  const reader = await PackageReader.open(path)
  try {
    const { meta, graph, blobs } = reader.manifest
    if (meta.kind !== 'flexpipe-elastic') {
      throw new ArgumentError(
        `package ${path} has no elastic shards (meta.kind ${JSON.stringify(meta.kind)}): targetLatencyMs needs a transformer prepared with \`flexpipe prepare --elastic <model folder>\`; open it with memoryBudget instead`,
      )
    }
    const g = graph as { kind?: unknown; config?: unknown; tokenizer?: unknown }
    if (g === null || typeof g !== 'object' || g.kind !== 'elastic-encoder') throw new PackageError(`package ${path}: the elastic graph is missing; re-run flexpipe prepare --elastic`)
    const config = parseEncoderConfig(g.config, `package ${path}`)
    return { config, tokenizer: g.tokenizer, blobs: new Map(blobs.map((b) => [b.name, b])), meta, digest: shardDigest(blobs) }
  } finally {
    await reader.close()
  }
}
