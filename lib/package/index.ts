// SPDX-License-Identifier: Apache-2.0
// The on-disk package (.fpk): format, writer and reader, re-exported.
export { PackageReader, type PackageReaderOptions, type VerifyLevel } from './reader.js'
export { PackageWriter, type PackageWriterOptions } from './writer.js'
export {
  padToBlob,
  blobAlignment,
  formatVersion,
  headerBytes,
  type BlobEntry,
  type BlobInfo,
  type Header,
  type PackageManifest,
} from './format.js'
export { crc32, crc32Source } from './crc32.js'
export { rewritePackageMeta } from './rewrite-meta.js'
