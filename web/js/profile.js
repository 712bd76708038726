// A user's profile, opened from their name on a note: when they joined, how many public
// notes they have, and (for anyone but oneself) Report and Block. The service answers 404
// for a profile the caller may not see (a block either way, a held or disabled account),
// exactly as for a name that does not exist: the dialog says so without guessing which.

import * as api from './api.js';
import * as dialogs from './dialogs.js';
import * as session from './session.js';
import * as safety from './safety.js';
import { $, el } from './dom.js';

let shown = null; // the profile in the dialog: {id, username, …} once loaded
let generation = 0;

export function init() {
  const dialog = $('#profile-dialog');
  $('#profile-report').addEventListener('click', () => report());
  $('#profile-block').addEventListener('click', () => block());
  dialogs.onClose(dialog, () => {
    shown = null;
    generation += 1;
  }, () => $('#map'));
}

/** A button with the author's name that opens their profile; plain text when there is no author. */
export function authorButton(author) {
  if (!author?.username) return el('span', { className: 'note-author', text: 'someone' });
  const button = el('button', {
    type: 'button', className: 'note-author', text: author.username, title: 'Show profile',
  });
  button.addEventListener('click', (event) => {
    // A note's list entry opens the note on a click; this click is for the profile.
    event.stopPropagation();
    open(author);
  });
  return button;
}

/** Opens the profile of author {id, username}. */
export async function open(author) {
  const dialog = $('#profile-dialog');
  const mine = ++generation;
  shown = null;
  $('#profile-title').textContent = author.username;
  $('#profile-status').textContent = 'Loading…';
  $('#profile-facts').hidden = true;
  $('#profile-report').hidden = true;
  $('#profile-block').hidden = true;
  dialogs.open(dialog, $('#profile-close'));
  try {
    const user = await api.get(`/v1/users/${encodeURIComponent(author.username)}`);
    if (mine !== generation) return;
    shown = user;
    $('#profile-title').textContent = user.username;
    $('#profile-status').textContent = '';
    $('#profile-joined').textContent = new Date(user.created_at)
      .toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' });
    $('#profile-notes').textContent = String(user.note_count);
    $('#profile-facts').hidden = false;
    const other = user.id !== session.current()?.user?.id;
    $('#profile-report').hidden = !other;
    $('#profile-block').hidden = !other;
  } catch (error) {
    if (mine !== generation) return;
    $('#profile-status').textContent = error.status === 404
      ? `${author.username}'s profile is not available: the account may be gone or under review, or one of you has blocked the other.`
      : '';
    if (error.status !== 404) dialogs.setError(dialog, error.message);
  }
}

function report() {
  const user = shown;
  if (!user) return;
  safety.askReport({
    type: 'user', id: user.id, label: `${user.username} and everything they post`,
    onReported: () => {
      safety.hideNotesBy(user.id);
      dialogs.close($('#profile-dialog'));
    },
  });
}

function block() {
  const user = shown;
  if (!user) return;
  safety.askBlock(user, { onBlocked: () => dialogs.close($('#profile-dialog')) });
}
