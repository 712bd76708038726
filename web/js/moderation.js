// The moderators' view: the queue of reported targets, the longest waiting first, each
// with the time left on the 24-hour clock app review teams hold a service to, and one
// click to decide; and the log of every report and decision. Only moderators see the
// button (GET /v1/me says who: `moderator`); the service answers 403 to anyone else.

import * as api from './api.js';
import * as dialogs from './dialogs.js';
import * as session from './session.js';
import { $, el } from './dom.js';
import { fullTime, timeAgo, timeLeft } from './format.js';
import * as decision from './decision.js';

const DAY = 24 * 60 * 60 * 1000;
const REASONS = {
  spam: 'Spam', harassment: 'Harassment', hate: 'Hate', sexual: 'Sexual content', violence: 'Violence',
  self_harm: 'Self-harm', illegal: 'Illegal', privacy: 'Private information', other: 'Other',
};
const ACTIONS = { dismiss: 'Dismissed', remove: 'Removed', suspend_author: 'Suspended the author', ban_author: 'Banned the author' };
const TYPES = { note: 'Note', place: 'Place', user: 'User' };

let deps = null;
let clock = null; // the timer that keeps the queue's clocks current while the dialog is open
const lists = {
  queue: { path: '/v1/moderation/reports', query: { state: 'open' }, cursor: null, generation: 0, render: queueItem, empty: 'Nothing to review. Thank you!' },
  log: { path: '/v1/moderation/log', query: {}, cursor: null, generation: 0, render: logEntry, empty: 'Nothing has been reported yet.' },
};

/** init({announce(text), showError(error), onDecided(item, action)}) */
export function init(dependencies) {
  deps = dependencies;
  decision.init();
  const dialog = $('#moderation-dialog');
  $('#moderation-button').addEventListener('click', () => open());
  $('#moderation-close').addEventListener('click', () => dialogs.close(dialog));
  for (const name of Object.keys(lists)) {
    $(`#moderation-tab-${name}`).addEventListener('click', () => showTab(name));
    $(`#moderation-${name}-more`).addEventListener('click', () => load(name, { more: true }));
  }
  $('#moderation-tabs').addEventListener('keydown', (event) => {
    if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
      event.preventDefault();
      showTab($('#moderation-tab-queue').getAttribute('aria-selected') === 'true' ? 'log' : 'queue', { focus: true });
    }
  });
  dialogs.onClose(dialog, () => {
    clearInterval(clock);
    clock = null;
  }, () => $('#moderation-button'));
}

function setModerator(on) {
  document.body.dataset.moderator = String(on);
  $('#moderation-button').hidden = !on;
}

/** Whether the signed-in user moderates this tenant (GET /v1/me said so). */
export function isModerator() {
  return document.body.dataset.moderator === 'true';
}

/** After signing in: the Moderation button for moderators only. */
export function setup(me) {
  setModerator(me.moderator === true);
}

export function reset() {
  setModerator(false);
  for (const list of Object.values(lists)) list.generation += 1; // late pages are dropped
  delete document.body.dataset.moderator;
  for (const name of Object.keys(lists)) $(`#moderation-${name}`).replaceChildren();
}

function open() {
  dialogs.open($('#moderation-dialog'), $('#moderation-tab-queue'));
  showTab('queue');
  clearInterval(clock);
  clock = setInterval(() => tick(), 30000);
}

function showTab(name, { focus = false } = {}) {
  for (const other of Object.keys(lists)) {
    const selected = other === name;
    const tab = $(`#moderation-tab-${other}`);
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    $(`#moderation-${other}-panel`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  // Each visit reads the list afresh: reports and other moderators' decisions come meanwhile.
  load(name);
}

async function load(name, { more = false } = {}) {
  const list = lists[name];
  const mine = ++list.generation;
  const status = $(`#moderation-${name}-status`);
  if (!more) {
    list.cursor = null;
    $(`#moderation-${name}`).replaceChildren();
    status.textContent = 'Loading…';
  }
  $(`#moderation-${name}-more`).hidden = true;
  try {
    const page = await api.get(list.path, { query: { ...list.query, limit: 50, cursor: more ? list.cursor : null } });
    if (mine !== list.generation) return;
    list.cursor = page.next_cursor;
    $(`#moderation-${name}`).append(...page.items.map(list.render));
    $(`#moderation-${name}-more`).hidden = !page.next_cursor;
    updateStatus(name);
  } catch (error) {
    if (mine !== list.generation) return;
    status.textContent = '';
    dialogs.setError($('#moderation-dialog'), error.message);
  }
}

function updateStatus(name) {
  const count = $(`#moderation-${name}`).children.length;
  const more = !$(`#moderation-${name}-more`).hidden;
  $(`#moderation-${name}-status`).textContent = count === 0 ? lists[name].empty
    : name === 'queue' ? `${count}${more ? '+' : ''} reported, the longest waiting first` : `${count}${more ? '+' : ''} entries, the newest first`;
}

// ——— the queue ———

function dueOf(item) {
  return item.due_at ? Date.parse(item.due_at) : Date.parse(item.first_reported_at) + DAY;
}

function showClock(node, due) {
  const left = timeLeft(due);
  node.textContent = left.text;
  node.dataset.overdue = String(left.overdue);
  node.closest('.moderation-item').dataset.overdue = String(left.overdue);
}

function tick() {
  for (const node of document.querySelectorAll('#moderation-queue .moderation-clock')) showClock(node, Number(node.dataset.due));
}

function queueItem(item) {
  const { type, id } = item.target;
  const due = dueOf(item);
  const count = item.open_reports;
  const clockNode = el('span', { className: 'moderation-clock', dataset: { due: String(due) }, title: `Due ${fullTime(new Date(due).toISOString())}` });
  const mine = item.author && item.author.id === session.current()?.user?.id;
  const buttons = [
    decisionButton('dismiss', 'Dismiss', 'button small'),
    // A user is suspended or banned, not removed; content deleted since has nothing left to remove.
    type === 'user' || item.content == null ? null : decisionButton('remove', 'Remove', 'button small danger'),
    // A default place has no author; a moderator cannot suspend or ban themselves.
    item.author && !mine ? decisionButton('suspend_author', type === 'user' ? 'Suspend' : 'Suspend author', 'button small') : null,
    item.author && !mine ? decisionButton('ban_author', type === 'user' ? 'Ban' : 'Ban author', 'button small danger') : null,
  ];
  const node = el('li', { className: 'moderation-item', dataset: { targetType: type, targetId: id } },
    el('p', { className: 'moderation-head' },
      el('span', { className: `moderation-type ${type}`, text: TYPES[type] ?? type }),
      item.moderation === 'pending' ? el('span', { className: 'badge held', text: 'held' }) : null,
      clockNode),
    item.content == null
      ? el('p', { className: 'moderation-content gone', text: 'Deleted since it was reported.' })
      : el('p', { className: 'moderation-content', text: item.content }),
    el('p', { className: 'moderation-meta' },
      type === 'user' ? null : el('span', { className: 'moderation-author' }, 'by ', el('strong', { text: item.author?.username ?? 'the operator' })),
      el('span', { className: 'moderation-count', text: `${count} report${count === 1 ? '' : 's'}` }),
      el('span', { className: 'moderation-reasons', text: item.reasons.map((r) => REASONS[r] ?? r).join(', ') })),
    el('div', { className: 'moderation-actions' }, buttons),
  );
  showClock(clockNode, due);
  for (const button of node.querySelectorAll('button')) {
    button.addEventListener('click', () => decide(item, node, button.dataset.action));
  }
  return node;
}

function decisionButton(action, text, className) {
  return el('button', { type: 'button', className: `${className} decide-${action.replace('_', '-')}`, text, dataset: { action } });
}

// Dismiss and remove take one click; suspending asks until when, banning asks to be sure.
async function decide(item, node, action) {
  const dialog = $('#moderation-dialog');
  let body = { action };
  if (action === 'suspend_author' || action === 'ban_author') {
    const answer = await decision.openDecision(item, action);
    if (!answer) return;
    body = { action, ...answer };
  }
  const { type, id } = item.target;
  const buttons = node.querySelectorAll('button');
  buttons.forEach((b) => { b.disabled = true; });
  dialogs.setError(dialog, '');
  try {
    await api.post(`/v1/moderation/targets/${type}/${encodeURIComponent(id)}/decision`, body);
    node.remove();
    updateStatus('queue');
    const who = item.author?.username;
    deps.announce({
      dismiss: 'Dismissed: the reports are closed.',
      remove: `Removed: no one sees that ${type} any more.`,
      suspend_author: `${who} is suspended.`,
      ban_author: `${who} is banned.`,
    }[action]);
    deps.onDecided(item, action);
    ($('#moderation-queue .moderation-item button') ?? $('#moderation-close')).focus();
  } catch (error) {
    buttons.forEach((b) => { b.disabled = false; });
    dialogs.setError(dialog, error.message);
  }
}

// ——— the log ———

function logEntry(entry) {
  const { type, id } = entry.target;
  const what = entry.kind === 'report'
    ? `Reported: ${REASONS[entry.reason] ?? entry.reason}`
    : `${ACTIONS[entry.action] ?? entry.action}${entry.moderator ? ` by ${entry.moderator.username}` : ''}`;
  return el('li', { className: `moderation-log-entry ${entry.kind}`, dataset: { kind: entry.kind, action: entry.action ?? '', targetType: type, targetId: id } },
    el('p', { className: 'moderation-head' },
      el('span', { className: `moderation-type ${type}`, text: TYPES[type] ?? type }),
      el('strong', { className: 'moderation-what', text: what }),
      el('time', { dateTime: entry.created_at, title: fullTime(entry.created_at), text: timeAgo(entry.created_at) })),
    el('p', { className: entry.content == null ? 'moderation-content gone' : 'moderation-content', text: entry.content ?? 'Already gone.' }),
    el('p', { className: 'moderation-meta' },
      entry.author && type !== 'user' ? el('span', {}, 'by ', el('strong', { text: entry.author.username })) : null,
      entry.until ? el('span', { text: `until ${fullTime(entry.until)}` }) : null,
      entry.note ? el('span', { className: 'moderation-note', text: `“${entry.note}”` }) : null),
  );
}
