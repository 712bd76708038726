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
// What the viewer shows: {noteId, index}.
let viewing = null;
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

/** A row of the note's thumbnails, each opening the viewer; null when it has none. */
export function strip(note) {
  if (!note.photos?.length) return null;
  const count = note.photos.length;
  return el('div', { className: 'photo-strip' }, note.photos.map((photo, index) => {
    const button = el('button', {
      type: 'button', className: 'photo-thumb', dataset: { photoId: photo.id },
      attrs: { 'aria-label': `Photo ${index + 1} of ${count}` },
    }, image(photo.variants.thumb, '', 'photo-thumb-image'));
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      open(note.id, index);
    });
    return button;
  }));
}

/** The author's controls under their note: add a photo from a file or the camera. */
export function uploader(note, limit = 4) {
  if (!note.is_mine || (note.photos?.length ?? 0) >= limit) return null;
  const progress = el('progress', { className: 'photo-progress', max: 1, value: 0, hidden: true, attrs: { 'aria-label': 'Uploading the photo' } });
  const pick = (capture) => {
    const input = el('input', { type: 'file', className: 'photo-input', accept: 'image/jpeg,image/png,image/webp,image/heic,image/heif' });
    if (capture) input.setAttribute('capture', 'environment');
    input.addEventListener('change', () => {
      const [file] = input.files;
      input.value = '';
      if (file) upload(note, file, progress);
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

async function upload(note, file, progress) {
  progress.hidden = false;
  progress.value = 0;
  // One key per chosen file: a retry of this upload never adds it twice.
  const key = api.newIdempotencyKey();
  try {
    await api.uploadFile(`/v1/notes/${encodeURIComponent(note.id)}/photos`, file, {
      key, onProgress: (fraction) => { progress.value = fraction; },
    });
    progress.value = 1;
    store.put(await api.get(`/v1/notes/${encodeURIComponent(note.id)}`), 'fetch');
    deps.announce('Photo added.');
  } catch (error) {
    progress.hidden = true;
    deps.showError(error);
  }
}

function open(noteId, index) {
  viewing = { noteId, index };
  show();
  dialogs.open(viewerDialog(), $('#photo-close'));
}

function step(delta) {
  const note = viewing && store.get(viewing.noteId);
  if (!note?.photos?.length) return;
  viewing.index = (viewing.index + delta + note.photos.length) % note.photos.length;
  show();
}

function show() {
  const note = store.get(viewing.noteId);
  const photos = note?.photos ?? [];
  if (!photos.length) { dialogs.close(viewerDialog()); return; }
  viewing.index = Math.min(viewing.index, photos.length - 1);
  const photo = photos[viewing.index];
  const frame = $('#photo-frame');
  frame.replaceChildren(image(photo.variants.display, `Photo ${viewing.index + 1} of ${photos.length} on the note: ${note.body}`, 'photo-view'));
  frame.dataset.photoId = photo.id;
  $('#photo-position').textContent = `${viewing.index + 1} of ${photos.length}`;
  $('#photo-previous').hidden = photos.length < 2;
  $('#photo-next').hidden = photos.length < 2;
  $('#photo-delete').hidden = !note.is_mine;
}

async function deleteShown() {
  const note = store.get(viewing.noteId);
  const photo = note?.photos?.[viewing.index];
  if (!photo) return;
  dialogs.setBusy(viewerDialog(), true);
  try {
    await api.del(`/v1/notes/${encodeURIComponent(note.id)}/photos/${encodeURIComponent(photo.id)}`);
    store.put(await api.get(`/v1/notes/${encodeURIComponent(note.id)}`), 'fetch');
    deps.announce('Photo deleted.');
    show();
  } catch (error) {
    dialogs.setError(viewerDialog(), error.message);
  } finally {
    dialogs.setBusy(viewerDialog(), false);
  }
}
