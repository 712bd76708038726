// The list view: notes near me, nearest first, within the distance I chose,
// narrowed by the search when there is one. Live changes are applied in place.

import * as api from './api.js';
import * as store from './store.js';
import * as prefs from './prefs.js';
import { $, el } from './dom.js';
import { distanceMetres, nearParam } from './geo.js';
import { noteItem } from './notes.js';

const PAGE = 100;
// Over everyone's notes the service needs two letters or digits in a row (its bigram index).
export const MIN_SEARCH_CHARS = 2;

let deps = null;
const query = { q: '', scope: 'all', tooShort: false };
let items = []; // [{note, distance}] in the order shown
let queryAt = null; // where the shown query measured from
let controller = null;
let nextCursor = null;
let lastParams = null;

/** init({here(), onOpen(note), onSearchResults(items), showError(error)}) */
export function init(dependencies) {
  deps = dependencies;
  $('#list-more').addEventListener('click', () => loadMore());
  store.on('put', ({ note }) => notePut(note));
  store.on('remove', ({ id }) => noteRemoved(id));
  store.on('clear', () => { items = []; render(); });
  // "just now" must not stay "just now": redraw the time hints now and then.
  setInterval(() => { if (items.length && document.visibilityState === 'visible') render(); }, 60000);
}

/** The search: q (from 2 characters, or any with scope mine), scope all|mine|others. */
export function setQuery({ q = query.q, scope = query.scope, tooShort = false }) {
  if (q === query.q && scope === query.scope) {
    // The same question (one or two letters more or less): the list stays, only the hint changes.
    query.tooShort = tooShort;
    $('#search-status').textContent = statusText();
    return Promise.resolve();
  }
  query.q = q;
  query.scope = scope;
  query.tooShort = tooShort;
  return reload({ zoomToNearest: Boolean(q) });
}

function params(at) {
  const radius = prefs.radiusMetres();
  const p = { near: nearParam(at), limit: PAGE };
  if (radius) p.radius_m = radius;
  if (query.q) { p.q = query.q; p.in = 'all'; }
  if (query.scope === 'mine') p.author = 'me';
  if (query.scope === 'others') p.author = 'others';
  return p;
}

/** Fetches the list again for where I am now. */
export async function reload({ zoomToNearest = false } = {}) {
  controller?.abort();
  const mine = new AbortController();
  controller = mine;
  const at = deps.here();
  const p = params(at);
  try {
    const page = await api.get('/v1/notes', { query: p, signal: mine.signal });
    if (mine.signal.aborted) return;
    queryAt = at;
    lastParams = p;
    nextCursor = page.next_cursor;
    store.putAll(page.items, 'fetch');
    items = page.items.map((note) => ({ note: store.get(note.id) ?? note, distance: note.distance_m }));
    render();
    if (zoomToNearest && query.q && items.length) deps.onSearchResults(items.map((i) => i.note));
  } catch (error) {
    if (api.isAbort(error) || mine.signal.aborted) return;
    if (error.code === 'query_too_broad') {
      // Text search needs two letters or digits in a row: say so where the user is typing.
      items = [];
      render(error.message);
      return;
    }
    deps.showError(error);
  } finally {
    if (controller === mine) controller = null;
  }
}

async function loadMore() {
  if (!nextCursor || !lastParams) return;
  // The page belongs to the list it was asked for: a reload meanwhile (a new search, a
  // move) aborts it, and its cursor must not be kept for the new list.
  controller?.abort();
  const mine = new AbortController();
  controller = mine;
  const asked = lastParams;
  try {
    const page = await api.get('/v1/notes', { query: { ...asked, cursor: nextCursor }, signal: mine.signal });
    if (mine.signal.aborted || lastParams !== asked) return;
    nextCursor = page.next_cursor;
    store.putAll(page.items, 'fetch');
    const known = new Set(items.map((i) => i.note.id));
    for (const note of page.items) {
      if (!known.has(note.id)) items.push({ note: store.get(note.id) ?? note, distance: note.distance_m });
    }
    render();
  } catch (error) {
    if (api.isAbort(error) || mine.signal.aborted) return;
    deps.showError(error);
  } finally {
    if (controller === mine) controller = null;
  }
}

function statusText(problem) {
  if (problem) return problem;
  const n = items.length;
  const more = nextCursor ? '+' : '';
  if (query.q) return n ? `${n}${more} result${n === 1 && !more ? '' : 's'}` : 'No notes match your search.';
  const prefix = query.tooShort ? `Type at least ${MIN_SEARCH_CHARS} characters to search. ` : '';
  if (!n) return `${prefix}No notes within this distance yet.`;
  return `${prefix}${n}${more} note${n === 1 && !more ? '' : 's'} nearby`;
}

function render(problem) {
  const list = $('#note-list');
  // Redrawing must not throw away the keyboard user's place in the list.
  const focused = list.contains(document.activeElement) ? document.activeElement.closest('li')?.dataset.noteId : null;
  list.replaceChildren(...items.map(({ note, distance }) => noteItem(note, distance, deps.onOpen)));
  if (focused) list.querySelector(`li[data-note-id="${CSS.escape(focused)}"] button`)?.focus();
  $('#search-status').textContent = statusText(problem);
  $('#list-more').hidden = !nextCursor;
}

// ——— live changes ———

function matches(note, distance) {
  if (query.scope === 'mine' && !note.is_mine) return false;
  if (query.scope === 'others' && note.is_mine) return false;
  const radius = prefs.radiusMetres();
  if (radius && distance > radius) return false;
  if (query.q) {
    const q = query.q.toLowerCase();
    if (!note.body.toLowerCase().includes(q) && !(note.author?.username ?? '').toLowerCase().includes(q)) return false;
  }
  return true;
}

function notePut(note) {
  if (!queryAt) return;
  const index = items.findIndex((i) => i.note.id === note.id);
  const distance = index >= 0 ? items[index].distance : distanceMetres(queryAt, note);
  const fits = matches(note, distance);
  if (index >= 0 && fits) {
    items[index] = { note, distance };
  } else if (index >= 0) {
    items.splice(index, 1);
  } else if (fits) {
    // Past the last item of an incomplete list, the note may belong to a later page.
    const at = items.findIndex((i) => i.distance > distance);
    if (at < 0 && nextCursor) return;
    items.splice(at < 0 ? items.length : at, 0, { note, distance });
  } else {
    return;
  }
  render();
}

function noteRemoved(id) {
  const index = items.findIndex((i) => i.note.id === id);
  if (index < 0) return;
  items.splice(index, 1);
  render();
}

/** Re-measures after I moved: worth a new query once I am well away from the last one. */
export function positionMoved(at) {
  if (!queryAt || distanceMetres(queryAt, at) > 50) reload();
}

export function reset() {
  controller?.abort();
  items = [];
  queryAt = null;
  nextCursor = null;
  $('#note-list').replaceChildren();
  $('#search-status').textContent = '';
}
