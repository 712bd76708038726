// One note, everywhere it appears: the popup on the map, the item in a list,
// the dialog that writes it and the one that confirms its deletion.

import * as api from './api.js';
import * as store from './store.js';
import * as dialogs from './dialogs.js';
import * as safety from './safety.js';
import * as terms from './terms.js';
import * as photos from './photos.js';
import { authorButton } from './profile.js';
import { $, el } from './dom.js';
import { coords, distanceHint, fullTime, timeAgo, truncate } from './format.js';
import { distanceMetres, nearParam } from './geo.js';

let deps = null;
const noteDialog = () => $('#note-dialog');
const confirmDialog = () => $('#confirm-dialog');

// What the note dialog is writing: {mode: 'new', lat, lng, key} or {mode: 'edit', note}.
let draft = null;
let deleting = null;

/**
 * init({here() -> {lat, lng, known}, showError(error), announce(text),
 *       placeName(id) -> string|null, newPlaceAt({lat, lng}) -> Promise<place|null>})
 */
export function init(dependencies) {
  deps = dependencies;
  const dialog = noteDialog();
  const body = $('#note-body');
  body.addEventListener('input', () => updateCount());
  $('#note-form').addEventListener('submit', (event) => {
    event.preventDefault();
    save();
  });
  $('#note-cancel').addEventListener('click', () => dialogs.close(dialog));
  $('#note-new-place').addEventListener('click', () => nameSpot());
  dialogs.onClose(dialog, () => { draft = null; }, () => $('#map'));

  $('#confirm-form').addEventListener('submit', (event) => {
    event.preventDefault();
    confirmDelete();
  });
  $('#confirm-no').addEventListener('click', () => dialogs.close(confirmDialog()));
  dialogs.onClose(confirmDialog(), () => { deleting = null; }, () => $('#map'));
}

/** Metres from where I am to the note. */
export function distanceTo(note) {
  const here = deps.here();
  return distanceMetres(here, note);
}

/** Held for a moderator (reported often enough, or a filtered word): only its author sees it, so says so. */
export function heldBadge(item) {
  return item.moderation === 'pending'
    ? el('span', { className: 'badge held', title: 'Hidden from others until a moderator looks at it', text: 'waiting for review' })
    : null;
}

function meta(note, distance) {
  const time = el('time', { className: 'note-time', dateTime: note.created_at, title: fullTime(note.created_at), text: timeAgo(note.created_at) });
  const edited = note.updated_at && note.updated_at !== note.created_at;
  return [
    el('span', { className: 'by' }, 'by ', authorButton(note.author)),
    note.is_mine ? el('span', { className: 'badge mine', text: 'you' }) : null,
    heldBadge(note),
    el('span', { className: 'sep', attrs: { 'aria-hidden': 'true' }, text: '·' }),
    time,
    edited ? el('span', { className: 'edited', text: '(edited)' }) : null,
    el('span', { className: 'sep', attrs: { 'aria-hidden': 'true' }, text: '·' }),
    el('span', { className: 'note-distance', title: 'Distance from you', text: distanceHint(distance) }),
  ];
}

/** The content of a pin's popup. */
export function popupFor(note) {
  if (!note.body) {
    // A pin drawn from a cluster of one, before its note arrived.
    api.get(`/v1/notes/${encodeURIComponent(note.id)}`)
      .then((full) => store.put(full, 'fetch'))
      .catch((error) => deps.showError(error));
    return el('div', { className: 'note-popup', dataset: { noteId: note.id } }, el('p', { className: 'muted', text: 'Loading note…' }));
  }
  const place = note.place_id ? deps.placeName(note.place_id) : null;
  const box = el('div', { className: `note-popup ${note.is_mine ? 'mine' : 'others'}`, dataset: { noteId: note.id } },
    el('p', { className: 'note-text', text: note.body }),
    photos.strip(note),
    el('p', { className: 'note-meta' }, meta(note, distanceTo(note))),
    place ? el('p', { className: 'note-place' }, 'at ', el('strong', { text: place })) : null,
    note.visibility === 'private' ? el('p', { className: 'badge private', text: 'Private: only you see it' }) : null,
  );
  if (note.is_mine) {
    const edit = el('button', { type: 'button', className: 'button small note-edit', text: 'Edit' });
    const remove = el('button', { type: 'button', className: 'button small danger note-delete', text: 'Delete' });
    edit.addEventListener('click', () => openEdit(store.get(note.id) ?? note));
    remove.addEventListener('click', () => askDelete(store.get(note.id) ?? note));
    box.append(el('div', { className: 'note-actions' }, edit, remove), photos.uploader(note));
  } else {
    box.append(safety.actionsFor(note));
  }
  return box;
}

/** An entry of a note list; distance in metres (the query's, when it had one). */
export function noteItem(note, distance, onOpen) {
  const owner = note.is_mine ? 'mine' : 'others';
  // The author's name opens their profile, so it sits beside the button that opens the
  // note (a button in a button is not allowed); a click anywhere else on the entry opens the note.
  const open = el('button', { type: 'button', className: 'note-open' }, el('span', { className: 'note-text', text: note.body }));
  open.setAttribute('aria-label', `${note.is_mine ? 'Your note' : `Note by ${note.author?.username ?? 'someone'}`}, ${distanceHint(distance)}: ${note.body}`);
  const item = el('li', { className: `note-item ${owner}`, dataset: { noteId: note.id } },
    el('span', { className: `note-kind ${owner}`, attrs: { 'aria-hidden': 'true' } }),
    el('div', { className: 'note-main' }, open, photos.strip(note), el('p', { className: 'note-meta' }, meta(note, distance))),
  );
  if (note.visibility === 'private') item.classList.add('private');
  item.addEventListener('click', () => onOpen(store.get(note.id) ?? note));
  return item;
}

// ——— the note dialog ———

// The service counts characters (code points); maxlength counts UTF-16 units, so it is
// set at twice the limit (an emoji is two units) and this says when a note is too long.
function updateCount() {
  const length = [...$('#note-body').value].length;
  $('#note-count').textContent = length > 500 ? `${length} / 500: too long` : `${length} / 500`;
  $('#note-body').setAttribute('aria-invalid', String(length > 500));
}

/** Opens the dialog for a new note at {lat, lng}; how says why there: 'position', 'spot' or 'centre'. */
export async function openNew(at, how) {
  // Where the tenant requires its terms, writing waits for them to be accepted.
  if (!(await terms.ready())) return;
  draft = { mode: 'new', lat: at.lat, lng: at.lng, key: api.newIdempotencyKey() };
  $('#note-dialog-title').textContent = 'New note';
  $('#note-save').textContent = 'Save note';
  $('#note-where').textContent = {
    position: 'At your position.',
    spot: `At the spot you picked (${coords(at)}).`,
    centre: `At the map's centre (${coords(at)}): your position is not known.`,
  }[how] ?? coords(at);
  $('#note-body').value = '';
  $('#note-visibility').value = 'public';
  $('#note-new-place').hidden = false;
  updateCount();
  fillPlaces(at, null);
  dialogs.open(noteDialog(), $('#note-body'));
}

export async function openEdit(note) {
  if (!(await terms.ready())) return;
  draft = { mode: 'edit', note, lat: note.lat, lng: note.lng, etag: null };
  fetchVersion(draft);
  $('#note-dialog-title').textContent = 'Edit note';
  $('#note-save').textContent = 'Save changes';
  $('#note-where').textContent = `Written ${timeAgo(note.created_at)} at ${coords(note)}.`;
  $('#note-body').value = note.body;
  $('#note-visibility').value = note.visibility;
  $('#note-new-place').hidden = false;
  updateCount();
  fillPlaces(note, note.place_id);
  dialogs.open(noteDialog(), $('#note-body'));
}

// The version being edited (its ETag), so saving cannot overwrite a change made
// meanwhile in another tab or on another device: the service answers 412 instead.
async function fetchVersion(forDraft) {
  try {
    const { value, etag } = await api.get(`/v1/notes/${encodeURIComponent(forDraft.note.id)}`, { withETag: true });
    if (draft !== forDraft) return;
    forDraft.etag = etag;
    if (value.updated_at !== forDraft.note.updated_at) showVersion(forDraft, value);
    store.put(value, 'fetch');
  } catch (error) {
    if (draft === forDraft) dialogs.setError(noteDialog(), error.message);
  }
}

function showVersion(forDraft, note) {
  forDraft.note = note;
  $('#note-body').value = note.body;
  $('#note-visibility').value = note.visibility;
  $('#note-place').value = note.place_id ?? '';
  updateCount();
}

// The place choices: the places nearest the note, and the note's own place.
async function fillPlaces(at, selected) {
  const select = $('#note-place');
  select.replaceChildren(el('option', { value: '', text: 'No place' }));
  if (selected) select.append(el('option', { value: selected, text: deps.placeName(selected) ?? 'Its current place' }));
  select.value = selected ?? '';
  const forDraft = draft;
  try {
    const page = await api.get('/v1/places', { query: { near: nearParam(at), limit: 50 } });
    if (draft !== forDraft) return;
    const chosen = select.value;
    select.replaceChildren(el('option', { value: '', text: 'No place' }));
    let found = false;
    for (const place of page.items) {
      const hint = distanceHint(place.distance_m);
      select.append(el('option', { value: place.id, text: hint === 'here' ? place.name : `${place.name} (${hint})` }));
      if (place.id === chosen) found = true;
    }
    if (chosen && !found) select.append(el('option', { value: chosen, text: deps.placeName(chosen) ?? 'Its current place' }));
    select.value = chosen;
  } catch (error) {
    if (draft === forDraft) dialogs.setError(noteDialog(), `Places could not be loaded: ${error.message}`);
  }
}

async function nameSpot() {
  if (!draft) return;
  const place = await deps.newPlaceAt({ lat: draft.lat, lng: draft.lng });
  if (!place || !draft) return;
  const select = $('#note-place');
  select.append(el('option', { value: place.id, text: place.name }));
  select.value = place.id;
}

async function save() {
  if (!draft) return;
  const dialog = noteDialog();
  const body = $('#note-body').value.trim();
  const visibility = $('#note-visibility').value;
  const placeId = $('#note-place').value || null;
  dialogs.setError(dialog, '');
  dialogs.setBusy(dialog, true);
  try {
    let note;
    if (draft.mode === 'new') {
      note = await api.post('/v1/notes', { body, lat: draft.lat, lng: draft.lng, visibility, place_id: placeId },
        { headers: { 'Idempotency-Key': draft.key } });
    } else {
      const old = draft.note;
      const changes = {};
      if (body !== old.body) changes.body = body;
      if (visibility !== old.visibility) changes.visibility = visibility;
      if (placeId !== (old.place_id ?? null)) changes.place_id = placeId;
      const headers = draft.etag ? { 'If-Match': draft.etag } : {};
      note = Object.keys(changes).length
        ? await api.patch(`/v1/notes/${encodeURIComponent(old.id)}`, changes, { headers })
        : old;
    }
    store.put(note, 'local');
    deps.announce(draft.mode === 'new' ? 'Note saved.' : 'Note updated.');
    dialogs.close(dialog);
  } catch (error) {
    if (error.status === 412 && draft?.mode === 'edit') {
      // Changed elsewhere since the dialog opened: show that version, let the user decide.
      const forDraft = draft;
      await fetchVersion(forDraft);
      if (draft === forDraft) {
        const message = 'This note was changed elsewhere meanwhile. Its current version is shown; save again to replace it.';
        dialogs.setError(dialog, message);
        deps.showError(new Error(message));
      }
    } else {
      dialogs.setError(dialog, error.message);
      // The terms' prompt opens by itself (terms.js) and says it all.
      if (error.code !== 'terms_not_accepted') deps.showError(error);
    }
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

// ——— deleting ———

export function askDelete(note) {
  deleting = { note, etag: null };
  showDeleting(deleting, note);
  dialogs.setError(confirmDialog(), '');
  dialogs.open(confirmDialog(), $('#confirm-no'));
  deleting.version = fetchDeletingVersion(deleting);
}

function showDeleting(forDelete, note) {
  forDelete.note = note;
  $('#confirm-text').textContent = `“${truncate(note.body, 78)}” will be gone for good.`;
}

// The version asked about (its ETag), so that confirming cannot delete a version changed
// meanwhile in another tab or on another device, unseen: the service answers 412 instead.
async function fetchDeletingVersion(forDelete) {
  try {
    const { value, etag } = await api.get(`/v1/notes/${encodeURIComponent(forDelete.note.id)}`, { withETag: true });
    if (deleting !== forDelete) return;
    forDelete.etag = etag;
    if (value.updated_at !== forDelete.note.updated_at) showDeleting(forDelete, value);
    store.put(value, 'fetch');
  } catch (error) {
    // Gone already, or unreachable: confirming says so, or deletes without a version.
  }
}

const changedMeanwhile = 'This note was changed elsewhere meanwhile; its current text is shown. Delete it anyway?';

async function confirmDelete() {
  if (!deleting) return;
  const dialog = confirmDialog();
  const forDelete = deleting;
  const shown = forDelete.note;
  dialogs.setBusy(dialog, true);
  try {
    // Its version first; one that arrives now and differs from the text confirmed is asked about again.
    await forDelete.version;
    if (deleting !== forDelete) return;
    if (forDelete.note !== shown) {
      dialogs.setError(dialog, changedMeanwhile);
      return;
    }
    const headers = forDelete.etag ? { 'If-Match': forDelete.etag } : {};
    await api.del(`/v1/notes/${encodeURIComponent(shown.id)}`, { headers });
    store.remove(shown.id, 'local');
    deps.announce('Note deleted.');
    dialogs.close(dialog);
  } catch (error) {
    if (error.status === 404) {
      // Already gone (deleted elsewhere): what the user wanted.
      store.remove(shown.id, 'local');
      dialogs.close(dialog);
    } else if (error.status === 412) {
      // Changed elsewhere since the question was asked: ask again about what it says now.
      await fetchDeletingVersion(forDelete);
      if (deleting === forDelete) {
        dialogs.setError(dialog, changedMeanwhile);
      }
    } else {
      deps.showError(error);
      dialogs.close(dialog);
    }
  } finally {
    dialogs.setBusy(dialog, false);
  }
}
