// SPDX-License-Identifier: Apache-2.0
// Writing SVG by hand: escaped text, compact numbers, elements, and axis ticks at round values.

/** Text and attribute values with the five XML special characters escaped. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]!};`)
}

/** A coordinate to a thousandth of a pixel: enough for a 4 KiB buffer in a 100 MB arena, short to write. */
export function num(x: number): string {
  return String(Math.round(x * 1000) / 1000)
}

/** An element: attributes escaped (numbers compacted), children as given (already SVG text). */
export function element(name: string, attrs: Readonly<Record<string, string | number>>, children: readonly string[] = []): string {
  const a = Object.entries(attrs)
    .map(([k, v]) => ` ${k}="${typeof v === 'number' ? num(v) : escapeXml(v)}"`)
    .join('')
  return children.length === 0 ? `<${name}${a}/>` : `<${name}${a}>${children.join('')}</${name}>`
}

/** A text element holding `text` (escaped). */
export function text(x: number, y: number, content: string, attrs: Readonly<Record<string, string | number>> = {}): string {
  return element('text', { x, y, ...attrs }, [escapeXml(content)])
}

/**
 * Tick values 0, step, 2 step, ... up to `max`, with step 1, 2 or 5 times a power of ten chosen so
 * that there are about `count` of them (the usual rule of plotting libraries).
 */
export function niceTicks(max: number, count: number, integer = false): number[] {
  if (!(max > 0)) return [0]
  const raw = max / count
  const power = 10 ** Math.floor(Math.log10(raw))
  let step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!
  if (integer) step = Math.max(1, Math.round(step))
  const ticks: number[] = []
  for (let i = 0; i * step <= max * (1 + 1e-9); i++) ticks.push(Number((i * step).toPrecision(12)))
  return ticks
}
