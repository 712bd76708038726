// The search box and the scope radios. Typing waits for a pause (~250 ms) and, over
// everyone's notes, for two characters, since the service needs two letters or digits in a
// row there (東京, 서울: its bigram index); over my own notes any text is searched (the
// service answers one letter there).

import * as api from './api.js';
import * as list from './list.js';
import { $, debounce } from './dom.js';

function current() {
  const text = $('#search-input').value.trim();
  const scope = document.querySelector('input[name="scope"]:checked')?.value ?? 'all';
  return { text, scope };
}

function apply() {
  const { text, scope } = current();
  const searching = [...text].length >= list.MIN_SEARCH_CHARS || (scope === 'mine' && text.length > 0);
  list.setQuery({ q: searching ? text : '', scope, tooShort: text.length > 0 && !searching });
}

const applySoon = debounce(apply, 250, { onSchedule: () => api.busy(+1), onSettle: () => api.busy(-1) });

export function init() {
  const input = $('#search-input');
  input.addEventListener('input', () => applySoon());
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      applySoon.cancel();
      apply();
    }
  });
  for (const radio of document.querySelectorAll('input[name="scope"]')) {
    radio.addEventListener('change', () => {
      applySoon.cancel();
      apply();
    });
  }
}

export function reset() {
  applySoon.cancel();
  $('#search-input').value = '';
  const all = document.querySelector('input[name="scope"][value="all"]');
  if (all) all.checked = true;
}
