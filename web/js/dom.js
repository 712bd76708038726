// DOM helpers. Everything the app shows is built with createElement and
// textContent: note bodies and usernames come from other people.

export const $ = (selector, root = document) => root.querySelector(selector);

/** el('li', {className: 'x', dataset: {noteId: '1'}, attrs: {role: 'button'}}, child, 'text') */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'attrs') for (const [name, v] of Object.entries(value)) node.setAttribute(name, v);
    else if (key === 'text') node.textContent = value;
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function show(node, visible) {
  node.hidden = !visible;
}

/** A function that runs `fn` once calls stop coming for `ms`; `.cancel()` drops a pending run. */
export function debounce(fn, ms, { onSchedule, onSettle } = {}) {
  let timer = null;
  const debounced = (...args) => {
    if (timer) clearTimeout(timer);
    else onSchedule?.();
    timer = setTimeout(() => {
      timer = null;
      onSettle?.();
      fn(...args);
    }, ms);
  };
  debounced.cancel = () => {
    if (!timer) return;
    clearTimeout(timer);
    timer = null;
    onSettle?.();
  };
  return debounced;
}

export const narrowScreen = () => window.matchMedia('(max-width: 799px)').matches;
