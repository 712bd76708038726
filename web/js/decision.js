// Suspending or banning an author from the moderation queue: both sign the author out at
// once and hide everything they posted, so the moderator is asked first, and for a
// suspension until when (the service lifts it by itself then; at most a year ahead).

import * as dialogs from './dialogs.js';
import { $ } from './dom.js';

const DAY = 24 * 60 * 60 * 1000;
let pending = null; // {action, resolve} while the dialog is open

export function init() {
  const dialog = $('#decision-dialog');
  $('#decision-form').addEventListener('submit', (event) => {
    event.preventDefault();
    confirm();
  });
  $('#decision-cancel').addEventListener('click', () => dialogs.close(dialog));
  $('#decision-duration').addEventListener('change', () => showDate());
  dialogs.onClose(dialog, () => {
    pending?.resolve(null);
    pending = null;
  }, () => $('#moderation-close'));
}

function isoDay(time) {
  const d = new Date(time);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function showDate() {
  const custom = $('#decision-duration').value === 'date';
  $('#decision-date-field').hidden = !custom;
}

/**
 * Asks about suspending ('suspend_author') or banning ('ban_author') the author of a queue
 * item; resolves to {until?, note?} for the decision, or null when the moderator cancels.
 */
export function openDecision(item, action) {
  pending?.resolve(null);
  const who = item.author?.username ?? 'the author';
  const suspend = action === 'suspend_author';
  $('#decision-title').textContent = suspend ? `Suspend ${who}?` : `Ban ${who} for good?`;
  $('#decision-text').textContent = `${who} is signed out at once and no one sees what they posted${suspend ? ' until the suspension ends' : ''}.`
    + (item.target.type === 'user' ? '' : ` The reported ${item.target.type} is removed.`);
  $('#decision-duration-field').hidden = !suspend;
  $('#decision-duration').value = '7';
  $('#decision-date').min = isoDay(Date.now() + DAY);
  $('#decision-date').max = isoDay(Date.now() + 364 * DAY);
  $('#decision-date').value = '';
  showDate();
  $('#decision-note').value = '';
  $('#decision-confirm').textContent = suspend ? 'Suspend' : 'Ban';
  return new Promise((resolve) => {
    pending = { action, resolve };
    dialogs.open($('#decision-dialog'), suspend ? $('#decision-duration') : $('#decision-note'));
  });
}

function until() {
  const choice = $('#decision-duration').value;
  if (choice !== 'date') return new Date(Date.now() + Number(choice) * DAY);
  const value = $('#decision-date').value;
  if (!value) return null;
  // The start of that day where the moderator is.
  const [year, month, day] = value.split('-').map(Number);
  return new Date(year, month - 1, day);
}

function confirm() {
  if (!pending) return;
  const dialog = $('#decision-dialog');
  const answer = {};
  if (pending.action === 'suspend_author') {
    const end = until();
    if (!end || Number.isNaN(end.getTime()) || end.getTime() <= Date.now() || end.getTime() > Date.now() + 365 * DAY) {
      dialogs.setError(dialog, 'Choose a day after today and within a year.');
      $('#decision-date').focus();
      return;
    }
    answer.until = end.toISOString();
  }
  const note = $('#decision-note').value.trim();
  if (note) answer.note = note;
  const { resolve } = pending;
  pending = null;
  resolve(answer);
  dialogs.close(dialog);
}
