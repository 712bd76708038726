// Photos on notes: thumbnails in popups and lists, a viewer, and the author's uploads
// (from a file, or the phone's camera) with their progress.
//
// A variant is read with the session's token (fetch, not <img src>: the API wants the
// Authorization header) and shown from a blob: URL kept for the page's life, since the
// bytes behind a variant's URL never change.

import * as api from './api.js';
import * as dialogs from './dialogs.js';
import * as store from './store.js';
import { $, el } from './dom.js';

let deps = null;
const viewerDialog = () => $('#photo-dialog');
// What the viewer shows: {id, index, kind}: a note's or a place's photos.
let viewing = null;

// Where each kind of holder is read again (the viewer follows changes) and written.
const KINDS = {
  note: {
    current: (id) => store.get(id),
    path: (id) => `/v1/notes/${encodeURIComponent(id)}`,
    reload: async (id) => store.put(await api.get(`/v1/notes/${encodeURIComponent(id)}`), 'fetch'),
    mine: (note) => note.is_mine,
  },
};

/** Lets places (or anything else with `photos`) use the strip, the uploader and the viewer. */
export function registerKind(kind, { current, path, reload, mine }) {
  KINDS[kind] = { current, path, reload, mine };
}
const objectURLs = new Map();

/** init({showError(error), announce(text)}) */
export function init(dependencies) {
  deps = dependencies;
  $('#photo-close').addEventListener('click', () => dialogs.close(viewerDialog()));
  $('#photo-previous').addEventListener('click', () => step(-1));
  $('#photo-next').addEventListener('click', () => step(+1));
  $('#photo-delete').addEventListener('click', () => deleteShown());
  viewerDialog().addEventListener('keydown', (event) => {
    if (event.key === 'ArrowLeft') step(-1);
    if (event.key === 'ArrowRight') step(+1);
  });
  dialogs.onClose(viewerDialog(), () => { viewing = null; }, () => $('#map'));
}

function objectURL(path) {
  if (!objectURLs.has(path)) {
    const loading = api.blob(path).then((blob) => URL.createObjectURL(blob));
    loading.catch(() => objectURLs.delete(path));
    objectURLs.set(path, loading);
  }
  return objectURLs.get(path);
}

/** An <img> of one variant, its size known before its bytes arrive (no layout jump). */
function image(variant, alt, className) {
  const img = el('img', { className, alt, width: variant.width, height: variant.height, decoding: 'async' });
  objectURL(variant.url)
    .then((url) => { img.src = url; })
    .catch(() => { img.classList.add('failed'); img.alt = 'This photo could not be loaded'; });
  return img;
}

/** A row of a note's (or place's) thumbnails, each opening the viewer; null when none. */
export function strip(note, kind = 'note') {
  if (!note.photos?.length) return null;
  const count = note.photos.length;
  return el('div', { className: 'photo-strip' }, note.photos.map((photo, index) => {
    const button = el('button', {
      type: 'button', className: 'photo-thumb', dataset: { photoId: photo.id },
      attrs: { 'aria-label': `Photo ${index + 1} of ${count}` },
    }, image(photo.variants.thumb, '', 'photo-thumb-image'));
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      open(note.id, index, kind);
    });
    return button;
  }));
}

/** The author's controls under their note (or place): add a photo from a file or the camera. */
export function uploader(note, kind = 'note', limit = 4) {
  if (!KINDS[kind].mine(note) || (note.photos?.length ?? 0) >= limit) return null;
  const progress = el('progress', { className: 'photo-progress', max: 1, value: 0, hidden: true, attrs: { 'aria-label': 'Uploading the photo' } });
  const pick = (capture) => {
    const input = el('input', { type: 'file', className: 'photo-input', accept: 'image/jpeg,image/png,image/webp,image/heic,image/heif' });
    if (capture) input.setAttribute('capture', 'environment');
    input.addEventListener('change', () => {
      const [file] = input.files;
      input.value = '';
      if (file) upload(note, kind, file, progress);
    });
    return input;
  };
  const fromFile = pick(false);
  const fromCamera = pick(true);
  const add = el('button', { type: 'button', className: 'button small photo-add', text: 'Add photo' });
  const take = el('button', { type: 'button', className: 'button small photo-take', text: 'Take photo' });
  add.addEventListener('click', () => fromFile.click());
  take.addEventListener('click', () => fromCamera.click());
  return el('div', { className: 'photo-upload' }, add, take, fromFile, fromCamera, progress);
}

async function upload(note, kind, file, progress) {
  progress.hidden = false;
  progress.value = 0;
  // One key per chosen file: a retry of this upload never adds it twice.
  const key = api.newIdempotencyKey();
  try {
    await api.uploadFile(`${KINDS[kind].path(note.id)}/photos`, file, {
      key, onProgress: (fraction) => { progress.value = fraction; },
    });
    progress.value = 1;
    await KINDS[kind].reload(note.id);
    deps.announce('Photo added.');
  } catch (error) {
    progress.hidden = true;
    deps.showError(error);
  }
}

function open(id, index, kind) {
  viewing = { id, index, kind };
  show();
  dialogs.open(viewerDialog(), $('#photo-close'));
}

function step(delta) {
  const note = viewing && KINDS[viewing.kind].current(viewing.id);
  if (!note?.photos?.length) return;
  viewing.index = (viewing.index + delta + note.photos.length) % note.photos.length;
  show();
}

function show() {
  const note = KINDS[viewing.kind].current(viewing.id);
  const photos = note?.photos ?? [];
  if (!photos.length) { dialogs.close(viewerDialog()); return; }
  viewing.index = Math.min(viewing.index, photos.length - 1);
  const photo = photos[viewing.index];
  const frame = $('#photo-frame');
  const what = viewing.kind === 'note' ? `the note: ${note.body}` : `${note.name ?? 'the place'}`;
  frame.replaceChildren(image(photo.variants.display, `Photo ${viewing.index + 1} of ${photos.length} of ${what}`, 'photo-view'));
  frame.dataset.photoId = photo.id;
  $('#photo-position').textContent = `${viewing.index + 1} of ${photos.length}`;
  $('#photo-previous').hidden = photos.length < 2;
  $('#photo-next').hidden = photos.length < 2;
  $('#photo-delete').hidden = !KINDS[viewing.kind].mine(note);
}

async function deleteShown() {
  const kind = KINDS[viewing.kind];
  const note = kind.current(viewing.id);
  const photo = note?.photos?.[viewing.index];
  if (!photo) return;
  dialogs.setBusy(viewerDialog(), true);
  try {
    await api.del(`${kind.path(note.id)}/photos/${encodeURIComponent(photo.id)}`);
    await kind.reload(note.id);
    deps.announce('Photo deleted.');
    show();
  } catch (error) {
    dialogs.setError(viewerDialog(), error.message);
  } finally {
    dialogs.setBusy(viewerDialog(), false);
  }
}
