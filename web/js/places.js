// Named places: the list nearest first (the operator's default ones and the
// ones people added look different), naming a spot, and a place's notes.

import * as api from './api.js';
import * as store from './store.js';
import * as dialogs from './dialogs.js';
import * as safety from './safety.js';
import * as session from './session.js';
import * as terms from './terms.js';
import * as photos from './photos.js';
import { isModerator } from './moderation.js';
import { $, el } from './dom.js';
import { coords, distanceHint } from './format.js';
import { distanceMetres, nearParam } from './geo.js';
import { heldBadge, noteItem } from './notes.js';

const known = new Map(); // id -> place, for names shown elsewhere (popups, the note dialog)
let shown = []; // places in the list, nearest first
let deps = null;
let listAt = null;
let controller = null;
let selected = null; // the place whose notes are shown
let placeNotes = []; // [{note, distance}]
let pending = null; // {at, resolve} while the place dialog is open

/** init({here(), showError(error), announce(text), onShowPlace(place), onOpenNote(note), onHidePlace()}) */
export function init(dependencies) {
  deps = dependencies;
  const dialog = $('#place-dialog');
  $('#new-place-button').addEventListener('click', () => {
    const here = deps.here();
    openNew(here, here.known ? 'position' : 'centre');
  });
  $('#place-form').addEventListener('submit', (event) => {
    event.preventDefault();
    save();
  });
  $('#place-cancel').addEventListener('click', () => dialogs.close(dialog));
  dialogs.onClose(dialog, () => {
    pending?.resolve(null);
    pending = null;
  });
  $('#place-detail-close').addEventListener('click', () => closeDetail());
  // A place's photos: a custom place's creator adds them, and the tenant's moderators a
  // default place's (the service decides; this only offers the buttons to those it allows).
  photos.registerKind('place', {
    current: (id) => known.get(id),
    path: (id) => `/v1/places/${encodeURIComponent(id)}`,
    reload: async (id) => {
      const place = await api.get(`/v1/places/${encodeURIComponent(id)}`);
      known.set(id, place);
      shown = shown.map((p) => (p.id === id ? place : p));
      if (selected?.id === id) selected = place;
      render();
      renderPhotos();
    },
    mine: (place) => (place.kind === 'custom' ? place.created_by?.id === session.current()?.user?.id : isModerator()),
  });
  $('#place-report').addEventListener('click', () => reportSelected());
  store.on('put', ({ note }) => notePut(note));
  store.on('remove', ({ id }) => noteRemoved(id));
}

export function name(id) {
  return known.get(id)?.name ?? null;
}

export async function reload() {
  controller?.abort();
  const mine = new AbortController();
  controller = mine;
  const at = deps.here();
  try {
    const page = await api.get('/v1/places', { query: { near: nearParam(at), limit: 100 }, signal: mine.signal });
    if (mine.signal.aborted) return;
    listAt = at;
    for (const place of page.items) known.set(place.id, place);
    shown = page.items;
    render();
  } catch (error) {
    if (!api.isAbort(error) && !mine.signal.aborted) deps.showError(error);
  } finally {
    if (controller === mine) controller = null;
  }
}

function distanceOf(place) {
  return place.distance_m ?? (listAt ? distanceMetres(listAt, place) : null);
}

function placeItem(place) {
  const count = place.note_count ?? 0;
  const kind = place.kind === 'default' ? 'default' : 'custom';
  const button = el('button', { type: 'button', className: 'place-open' },
    el('span', { className: `place-icon ${kind}`, attrs: { 'aria-hidden': 'true' } }),
    el('span', { className: 'place-main' },
      el('span', { className: 'place-name', text: place.name }),
      el('span', { className: 'place-meta' },
        el('span', { className: 'place-distance', text: distanceHint(distanceOf(place)) }),
        el('span', { className: 'sep', attrs: { 'aria-hidden': 'true' }, text: '·' }),
        el('span', { className: `place-kind ${kind}`, text: kind }),
        el('span', { className: 'sep', attrs: { 'aria-hidden': 'true' }, text: '·' }),
        el('span', { className: 'place-count', text: `${count} note${count === 1 ? '' : 's'}` }),
        heldBadge(place),
      ),
    ),
  );
  const item = el('li', { className: `place-item ${kind}`, dataset: { placeId: place.id } }, button, photos.strip(place, 'place'));
  if (selected?.id === place.id) item.setAttribute('aria-current', 'true');
  item.addEventListener('click', () => open(known.get(place.id) ?? place));
  return item;
}

function render() {
  $('#place-list').replaceChildren(...shown.map(placeItem));
  $('#places-status').textContent = shown.length
    ? `${shown.length} place${shown.length === 1 ? '' : 's'}, nearest first`
    : 'No places nearby yet. Name the spot you are at!';
}

// ——— one place and its notes ———

export async function open(place) {
  selected = place;
  placeNotes = [];
  $('#place-notes-heading').textContent = `Notes at ${place.name}`;
  $('#place-notes').replaceChildren();
  $('#place-notes-status').textContent = 'Loading…';
  $('#place-detail').hidden = false;
  renderPhotos();
  // Anyone's place may be reported but one's own (the operator's default places too).
  $('#place-report').hidden = place.created_by?.id === session.current()?.user?.id;
  render();
  deps.onShowPlace(place);
  try {
    const at = deps.here();
    const page = await api.get('/v1/notes', { query: { place_id: place.id, near: nearParam(at), limit: 200 } });
    if (selected !== place) return;
    store.putAll(page.items, 'fetch');
    placeNotes = page.items.map((note) => ({ note: store.get(note.id) ?? note, distance: note.distance_m }));
    renderNotes();
  } catch (error) {
    if (selected === place) $('#place-notes-status').textContent = '';
    deps.showError(error);
  }
}

function renderPhotos() {
  const place = selected && (known.get(selected.id) ?? selected);
  $('#place-photos').replaceChildren(...(place ? [photos.strip(place, 'place'), photos.uploader(place, 'place')].filter(Boolean) : []));
}

function renderNotes() {
  $('#place-notes').replaceChildren(...placeNotes.map(({ note, distance }) => noteItem(note, distance, deps.onOpenNote)));
  const n = placeNotes.length;
  $('#place-notes-status').textContent = n ? `${n} note${n === 1 ? '' : 's'}` : 'No notes here yet.';
}

function reportSelected() {
  const place = selected;
  if (!place) return;
  safety.askReport({
    type: 'place', id: place.id,
    label: place.created_by ? `“${place.name}”, named by ${place.created_by.username}` : `“${place.name}”`,
    // Hidden from the reporter from now on: off the list and the map.
    onReported: () => placeRemoved(place.id),
  });
}

function closeDetail() {
  selected = null;
  placeNotes = [];
  $('#place-detail').hidden = true;
  render();
  deps.onHidePlace();
}

function notePut(note) {
  if (!selected) return;
  const index = placeNotes.findIndex((i) => i.note.id === note.id);
  const belongs = note.place_id === selected.id;
  if (index >= 0 && belongs) placeNotes[index] = { note, distance: placeNotes[index].distance };
  else if (index >= 0) placeNotes.splice(index, 1);
  else if (belongs) {
    const distance = distanceMetres(deps.here(), note);
    const at = placeNotes.findIndex((i) => i.distance > distance);
    placeNotes.splice(at < 0 ? placeNotes.length : at, 0, { note, distance });
  } else return;
  renderNotes();
}

function noteRemoved(id) {
  const index = placeNotes.findIndex((i) => i.note.id === id);
  if (index < 0) return;
  placeNotes.splice(index, 1);
  renderNotes();
}

// ——— live place changes ———

export function placePut(place) {
  known.set(place.id, place);
  const index = shown.findIndex((p) => p.id === place.id);
  if (index >= 0) shown[index] = { ...place, distance_m: shown[index].distance_m };
  else if (listAt) {
    const distance = distanceMetres(listAt, place);
    // Before others at the same distance: a place just named should be seen at once.
    const at = shown.findIndex((p) => (p.distance_m ?? 0) >= distance);
    shown.splice(at < 0 ? shown.length : at, 0, { ...place, distance_m: distance });
  }
  if (selected?.id === place.id) {
    selected = place;
    $('#place-notes-heading').textContent = `Notes at ${place.name}`;
  }
  render();
}

export function placeRemoved(id) {
  known.delete(id);
  shown = shown.filter((p) => p.id !== id);
  if (selected?.id === id) closeDetail();
  render();
}

// ——— naming a spot ———

/** Opens the place dialog at {lat, lng}; resolves to the new place, or null if cancelled. */
export async function openNew(at, how = 'spot') {
  // Where the tenant requires its terms, naming a place waits for them to be accepted.
  if (!(await terms.ready())) return null;
  pending?.resolve(null);
  return new Promise((resolve) => {
    pending = { at: { lat: at.lat, lng: at.lng }, resolve };
    $('#place-name').value = '';
    $('#place-where').textContent = {
      position: 'Your position gets this name.',
      centre: `The map's centre (${coords(at)}) gets this name: your position is not known.`,
      spot: `The spot at ${coords(at)} gets this name.`,
    }[how] ?? coords(at);
    dialogs.open($('#place-dialog'), $('#place-name'));
  });
}

async function save() {
  if (!pending) return;
  const dialog = $('#place-dialog');
  const request = pending;
  dialogs.setError(dialog, '');
  dialogs.setBusy(dialog, true);
  try {
    const place = await api.post('/v1/places', { name: $('#place-name').value.trim(), lat: request.at.lat, lng: request.at.lng });
    placePut(place);
    deps.announce(`Place “${place.name}” saved.`);
    pending = null;
    request.resolve(place);
    dialogs.close(dialog);
  } catch (error) {
    dialogs.setError(dialog, error.message);
    // The terms' prompt opens by itself (terms.js) and says it all.
    if (error.code !== 'terms_not_accepted') deps.showError(error);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

export function positionMoved(at) {
  if (!listAt || distanceMetres(listAt, at) > 200) reload();
}

export function reset() {
  controller?.abort();
  shown = [];
  known.clear();
  listAt = null;
  selected = null;
  placeNotes = [];
  $('#place-list').replaceChildren();
  $('#place-detail').hidden = true;
  $('#places-status').textContent = '';
}
