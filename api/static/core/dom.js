// Tiny DOM helpers: build elements without innerHTML (ids, names and titles are data, never markup).

/** The first element matching `selector` under `root`. */
export const $ = (selector, root = document) => root.querySelector(selector);

/** Every element matching `selector` under `root`, as an array. */
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/**
 * Create an element.
 * @param {string} tag element name
 * @param {Object<string, any>} attrs attributes; `class`, `text`, `on<event>` handlers,
 *        `dataset` and `style` (CSS declarations) are special; false/null/undefined values are
 *        left out, true is an empty attribute
 * @param {...(Node|string|number|null|undefined|false|Array)} children
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    // through the CSSOM: the page's Content-Security-Policy refuses style attributes
    else if (key === "style") node.style.cssText = String(value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "value" && "value" in node) node.value = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** Append children (nested arrays flattened, empty values skipped, others as text). */
export function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace the children of `node`. */
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A muted line of text (empty states, hints). */
export const muted = (text, attrs = {}) => h("p", { class: "muted", ...attrs }, text);

/** Values of a form's named controls: numbers as numbers (empty: null), checkboxes as booleans. */
export function formValues(form) {
  const data = {};
  for (const element of form.elements) {
    if (!element.name || element.type === "submit" || element.type === "button" || element.type === "file") continue;
    if (element.type === "checkbox") data[element.name] = element.checked;
    else if (element.type === "number") data[element.name] = element.value === "" ? null : Number(element.value);
    else data[element.name] = element.value;
  }
  return data;
}

/** Download a Blob under a file name. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
