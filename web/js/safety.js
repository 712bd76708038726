// Reporting (App Store Review Guideline 1.2): the report dialog for a note, a place or a
// user, and blocking a user; the actions on someone else's note, and the account's list of
// blocked users. The service hides what a user reported or blocked everywhere (lists, map,
// search, live updates); the app takes it off the screen at once.

import * as api from './api.js';
import * as store from './store.js';
import * as dialogs from './dialogs.js';
import { $, el } from './dom.js';
import { truncate } from './format.js';

let deps = null;
let reporting = null; // {type, id, label, onReported} being reported
let blocking = null;  // {author: {id, username}, onBlocked} being blocked

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
  report.addEventListener('click', () => askReportNote(store.get(note.id) ?? note));
  block.addEventListener('click', () => askBlock(note.author));
  return el('div', { className: 'note-actions' }, report, block);
}

function askReportNote(note) {
  askReport({
    type: 'note', id: note.id,
    label: `“${truncate(note.body, 78)}” by ${note.author?.username ?? 'someone'}`,
    onReported: () => store.remove(note.id, 'local'),
  });
}

const HINTS = {
  note: 'You will not see it again. Its author is not told who reported it.',
  place: 'You will not see it again. Whoever named it is not told who reported it.',
  user: 'You will not see them or their notes again. They are not told who reported them.',
};
const THANKS = {
  note: 'Reported. Thank you: you will not see that note again.',
  place: 'Reported. Thank you: you will not see that place again.',
  user: 'Reported. Thank you: you will not see that user or their notes again.',
};

/**
 * The report dialog for target {type: 'note' | 'place' | 'user', id, label (what it quotes),
 * onReported() (takes it off the screen: the service hides it from the reporter from now on)}.
 */
export function askReport(target) {
  reporting = target;
  $('#report-title').textContent = `Report this ${target.type}`;
  $('#report-text').textContent = target.label;
  $('#report-hint').textContent = HINTS[target.type];
  $('#report-reason').value = 'spam';
  $('#report-detail').value = '';
  dialogs.open($('#report-dialog'), $('#report-reason'));
}

async function sendReport() {
  if (!reporting) return;
  const dialog = $('#report-dialog');
  const target = reporting;
  const detail = $('#report-detail').value.trim();
  dialogs.setBusy(dialog, true);
  try {
    await api.post('/v1/reports', { target: { type: target.type, id: target.id }, reason: $('#report-reason').value, ...(detail ? { detail } : {}) });
    // Hidden from the reporter from now on, everywhere: off this screen too.
    target.onReported?.();
    deps.announce(THANKS[target.type]);
    dialogs.close(dialog);
  } catch (error) {
    dialogs.setError(dialog, error.message);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

/** The block dialog for author {id, username}; onBlocked() runs once they are blocked. */
export function askBlock(author, { onBlocked } = {}) {
  if (!author) return;
  blocking = { author, onBlocked };
  $('#block-title').textContent = `Block ${author.username}?`;
  $('#block-text').textContent = `Neither of you will see the other's notes or profile any more. ${author.username} is not told.`;
  dialogs.open($('#block-dialog'), $('#block-no'));
}

async function confirmBlock() {
  if (!blocking) return;
  const dialog = $('#block-dialog');
  const { author, onBlocked } = blocking;
  dialogs.setBusy(dialog, true);
  try {
    await api.request('PUT', `/v1/me/blocks/${encodeURIComponent(author.username)}`);
    hideNotesBy(author.id);
    onBlocked?.();
    deps.announce(`${author.username} is blocked.`);
    dialogs.close(dialog);
  } catch (error) {
    dialogs.setError(dialog, error.message);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

/** Takes one author's notes off the screen (the map's, the lists'): blocked, reported or suspended. */
export function hideNotesBy(authorID) {
  const ids = new Set();
  for (const marker of document.querySelectorAll('[data-note-id]')) {
    const note = store.get(marker.dataset.noteId);
    if (note && note.author?.id === authorID) ids.add(note.id);
  }
  for (const id of ids) store.remove(id, 'local');
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
