// SPDX-License-Identifier: Apache-2.0
// The layering of lib/, checked by dependency-cruiser (`npm run check:layers`, run by CI). Imports go down:
//
//   cli -> api (index.ts, api/) -> prepare -> runtime (+ native) -> profile -> plan -> model, package -> base
//
// base is errors.ts, tensor.ts, validate.ts, align.ts. Planners are pure: lib/plan imports neither the
// runtime nor the addon, so every planner is unit-testable without a build. No import cycles anywhere.
const layers = [
  { name: 'cli', path: '^lib/cli/' },
  { name: 'api', path: '^lib/(index\\.ts$|api/)' },
  { name: 'prepare', path: '^lib/prepare/' },
  { name: 'runtime', path: '^lib/(runtime|native)/' },
  { name: 'profile', path: '^lib/profile/' },
  { name: 'plan', path: '^lib/plan/' },
  { name: 'model and package', path: '^lib/(model|package)/' },
]

/** One rule per layer: it may not import any layer above it. */
const upward = layers.slice(1).map((layer, i) => ({
  name: `no-upward-from-${layer.name.replace(/ /g, '-')}`,
  comment: `${layer.name} may not import ${layers.slice(0, i + 1).map((l) => l.name).join(', ')} (imports go down: ${layers.map((l) => l.name).join(' -> ')} -> base)`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: layers.slice(0, i + 1).map((l) => l.path).join('|') },
}))

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle: move the shared types to the lower module',
      severity: 'error',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'base-is-a-leaf',
      comment: 'errors, tensor, validate and align import nothing else of lib/',
      severity: 'error',
      from: { path: '^lib/(errors|tensor|validate|align)\\.ts$' },
      to: { path: '^lib/', pathNot: '^lib/(errors|tensor|validate|align)\\.ts$' },
    },
    {
      name: 'model-does-not-import-package',
      comment: 'the graph IR and operators know nothing of the package format',
      severity: 'error',
      from: { path: '^lib/model/' },
      to: { path: '^lib/package/' },
    },
    {
      name: 'addon-only-through-binding',
      comment: 'only lib/native/binding.ts loads the addon',
      severity: 'error',
      from: { path: '^lib/', pathNot: '^lib/native/binding\\.ts$' },
      to: { path: '\\.node$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^lib/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
