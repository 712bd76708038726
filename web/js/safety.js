// Reporting notes and blocking their authors (App Store Review Guideline 1.2): the
// actions on someone else's note, and the account's list of blocked users. The
// service hides what a user reported or blocked everywhere (lists, map, search,
// live updates); the app takes it off the screen at once.

import * as api from './api.js';
import * as store from './store.js';
import * as dialogs from './dialogs.js';
import { $, el } from './dom.js';
import { truncate } from './format.js';

let deps = null;
let reporting = null; // the note being reported
let blocking = null;  // {id, username} being blocked

/** init({announce(text), showError(error)}) */
export function init(dependencies) {
  deps = dependencies;
  $('#report-form').addEventListener('submit', (event) => {
    event.preventDefault();
    sendReport();
  });
  $('#report-cancel').addEventListener('click', () => dialogs.close($('#report-dialog')));
  dialogs.onClose($('#report-dialog'), () => { reporting = null; }, () => $('#map'));
  $('#block-form').addEventListener('submit', (event) => {
    event.preventDefault();
    confirmBlock();
  });
  $('#block-no').addEventListener('click', () => dialogs.close($('#block-dialog')));
  dialogs.onClose($('#block-dialog'), () => { blocking = null; }, () => $('#map'));
  $('#blocks-button').addEventListener('click', () => showBlocks());
  dialogs.onClose($('#blocks-dialog'), () => {}, () => $('#blocks-button'));
}

/** The buttons for someone else's note: report it, block its author. */
export function actionsFor(note) {
  const report = el('button', { type: 'button', className: 'button small subtle note-report', text: 'Report' });
  const block = el('button', { type: 'button', className: 'button small subtle note-block', text: `Block ${note.author?.username ?? ''}` });
  report.addEventListener('click', () => askReport(store.get(note.id) ?? note));
  block.addEventListener('click', () => askBlock(note.author));
  return el('div', { className: 'note-actions' }, report, block);
}

function askReport(note) {
  reporting = note;
  $('#report-text').textContent = `“${truncate(note.body, 78)}” by ${note.author?.username ?? 'someone'}`;
  $('#report-reason').value = 'spam';
  $('#report-detail').value = '';
  dialogs.open($('#report-dialog'), $('#report-reason'));
}

async function sendReport() {
  if (!reporting) return;
  const dialog = $('#report-dialog');
  const note = reporting;
  const detail = $('#report-detail').value.trim();
  dialogs.setBusy(dialog, true);
  try {
    await api.post('/v1/reports', { target: { type: 'note', id: note.id }, reason: $('#report-reason').value, ...(detail ? { detail } : {}) });
    // Hidden from the reporter from now on, everywhere: off this screen too.
    store.remove(note.id, 'local');
    deps.announce('Reported. Thank you: you will not see that note again.');
    dialogs.close(dialog);
  } catch (error) {
    dialogs.setError(dialog, error.message);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

function askBlock(author) {
  if (!author) return;
  blocking = author;
  $('#block-title').textContent = `Block ${author.username}?`;
  $('#block-text').textContent = `Neither of you will see the other's notes or profile any more. ${author.username} is not told.`;
  dialogs.open($('#block-dialog'), $('#block-no'));
}

async function confirmBlock() {
  if (!blocking) return;
  const dialog = $('#block-dialog');
  const author = blocking;
  dialogs.setBusy(dialog, true);
  try {
    await api.request('PUT', `/v1/me/blocks/${encodeURIComponent(author.username)}`);
    for (const id of notesBy(author.id)) store.remove(id, 'local');
    deps.announce(`${author.username} is blocked.`);
    dialogs.close(dialog);
  } catch (error) {
    dialogs.setError(dialog, error.message);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

// The ids of the notes by one author the app holds (the map's, the lists').
function notesBy(authorID) {
  const ids = [];
  for (const marker of document.querySelectorAll('[data-note-id]')) {
    const note = store.get(marker.dataset.noteId);
    if (note && note.author?.id === authorID) ids.push(note.id);
  }
  return [...new Set(ids)];
}

async function showBlocks() {
  const dialog = $('#blocks-dialog');
  const list = $('#blocks-list');
  list.replaceChildren();
  $('#blocks-status').textContent = 'Loading…';
  dialogs.open(dialog, $('#blocks-close'));
  try {
    const page = await api.get('/v1/me/blocks', { query: { limit: 200 } });
    $('#blocks-status').textContent = page.items.length ? '' : 'You have blocked no one.';
    for (const user of page.items) list.append(blockedItem(user));
  } catch (error) {
    $('#blocks-status').textContent = '';
    dialogs.setError(dialog, error.message);
  }
}

function blockedItem(user) {
  const unblock = el('button', { type: 'button', className: 'button small unblock', text: 'Unblock' });
  const item = el('li', { className: 'blocked-user', dataset: { username: user.username } }, el('span', { text: user.username }), unblock);
  unblock.addEventListener('click', async () => {
    try {
      await api.del(`/v1/me/blocks/${encodeURIComponent(user.username)}`);
      item.remove();
      if (!$('#blocks-list').children.length) $('#blocks-status').textContent = 'You have blocked no one.';
      deps.announce(`${user.username} is unblocked: their notes show again when the map or list next loads.`);
    } catch (error) {
      dialogs.setError($('#blocks-dialog'), error.message);
    }
  });
  return item;
}
