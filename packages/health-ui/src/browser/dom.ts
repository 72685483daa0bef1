/**
 * The only way the page builds DOM: elements from code-chosen tag and attribute names, text through
 * `textContent`. No `innerHTML`, no markup strings, no inline styles (the page runs under a strict CSP).
 */

/** Attributes of an element; `false`, null and undefined leave the attribute out. */
export type Attributes = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** A child: a node, text (set as a text node), or nothing. */
export type Child = Node | string | null | undefined | false;

function setAttributes(element: Element, attributes: Attributes | undefined): void {
  if (attributes === undefined) return;
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Creates an HTML element; `className` is a convenience for the `class` attribute. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Attributes,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes?: Attributes,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

/** Replaces every child of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
