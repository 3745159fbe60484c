// SPDX-License-Identifier: Apache-2.0
// What the loaded addon is (arch, ISA, OpenMP, io_uring), for bug reports and `flexpipe info`.
import { binding, type NativeInfo } from './binding.js'

export function nativeInfo(): NativeInfo {
  return binding().info()
}
