// SPDX-License-Identifier: Apache-2.0
// A small XML reader for the tests of hand-written SVG: it throws unless the text is well-formed (one
// root element, tags nested and closed, attribute values quoted and unique, '<' and '&' only as markup
// or the predefined and numeric entities) and returns the element tree with entities decoded.

export interface XmlElement {
  readonly name: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: XmlElement[]
  /** The element's own text (its children's not included). */
  text: string
}

const nameRe = /^[A-Za-z_:][-A-Za-z0-9_:.]*/
const entities: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function decode(raw: string, at: number): string {
  if (raw.includes('<')) throw new Error(`XML: '<' in text or attribute value near ${at}`)
  return raw.replace(/&([^;]*);?/g, (m, e: string) => {
    if (!m.endsWith(';')) throw new Error(`XML: '&' that starts no entity near ${at}`)
    if (entities[e] !== undefined) return entities[e]
    const code = /^#x[0-9a-fA-F]+$/.test(e) ? parseInt(e.slice(2), 16) : /^#[0-9]+$/.test(e) ? Number(e.slice(1)) : undefined
    if (code === undefined) throw new Error(`XML: unknown entity &${e}; near ${at}`)
    return String.fromCodePoint(code)
  })
}

/** Parses `src`; throws an Error naming the position of the first fault. */
export function parseXml(src: string): XmlElement {
  let i = 0
  let root: XmlElement | undefined
  const stack: XmlElement[] = []
  const skipMisc = (): void => {
    for (;;) {
      while (/\s/.test(src[i] ?? '')) i++
      const end = src.startsWith('<!--', i) ? src.indexOf('-->', i) + 3 : src.startsWith('<?', i) ? src.indexOf('?>', i) + 2 : 0
      if (end <= 2) return
      i = end
    }
  }
  skipMisc()
  while (i < src.length) {
    if (stack.length === 0 && root !== undefined) {
      skipMisc()
      if (i < src.length) throw new Error(`XML: content after the root element at ${i}`)
      break
    }
    if (src[i] !== '<') {
      const end = src.indexOf('<', i)
      if (stack.length === 0) throw new Error(`XML: text outside the root element at ${i}`)
      stack[stack.length - 1]!.text += decode(src.slice(i, end < 0 ? src.length : end), i)
      i = end < 0 ? src.length : end
    } else if (src.startsWith('<!--', i)) {
      const end = src.indexOf('-->', i)
      if (end < 0) throw new Error(`XML: unclosed comment at ${i}`)
      i = end + 3
    } else if (src[i + 1] === '/') {
      const m = /^<\/([^\s>]+)\s*>/.exec(src.slice(i))
      const open = stack.pop()
      if (m === null || open === undefined || m[1] !== open.name) throw new Error(`XML: closing tag at ${i} does not match <${open?.name ?? ''}>`)
      i += m[0].length
    } else {
      i = startTag(src, i + 1, stack, (e) => (root ??= e))
    }
  }
  if (root === undefined || stack.length > 0) throw new Error(`XML: ${root === undefined ? 'no root element' : `<${stack[stack.length - 1]!.name}> is not closed`}`)
  return root
}

/** Reads a start tag after its '<'; pushes its element (unless self-closing); returns the index after '>'. */
function startTag(src: string, at: number, stack: XmlElement[], first: (e: XmlElement) => void): number {
  let i = at
  const name = nameRe.exec(src.slice(i))?.[0]
  if (name === undefined) throw new Error(`XML: bad tag name at ${i}`)
  i += name.length
  const attrs: Record<string, string> = {}
  for (;;) {
    const ws = /^\s*/.exec(src.slice(i))![0].length
    i += ws
    if (src.startsWith('/>', i) || src[i] === '>') break
    const a = /^([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*("([^"]*)"|'([^']*)')/.exec(src.slice(i))
    if (a === null || ws === 0) throw new Error(`XML: bad attribute in <${name}> at ${i}`)
    if (attrs[a[1]!] !== undefined) throw new Error(`XML: attribute ${a[1]} twice in <${name}> at ${i}`)
    attrs[a[1]!] = decode(a[3] ?? a[4] ?? '', i)
    i += a[0].length
  }
  const e: XmlElement = { name, attrs, children: [], text: '' }
  if (stack.length > 0) stack[stack.length - 1]!.children.push(e)
  else first(e)
  if (src[i] === '>') stack.push(e)
  return i + (src[i] === '>' ? 1 : 2)
}

/** Every element under (and including) `root` that `pick` accepts, in document order. */
export function findAll(root: XmlElement, pick: (e: XmlElement) => boolean): XmlElement[] {
  const out = pick(root) ? [root] : []
  for (const c of root.children) out.push(...findAll(c, pick))
  return out
}
