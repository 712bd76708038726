// Watched areas (issue 39): the areas the user hears about when someone leaves a note there.
// Pushes go to the user's iOS devices; the web app cannot receive them, so it lists, adds,
// changes and removes the watches, each a circle around a point (added at "here": the
// user's position, or the map's centre).

import * as api from './api.js';
import * as dialogs from './dialogs.js';
import { $, el } from './dom.js';

let deps = null;

/** init({here() -> {lat, lng}, announce(text)}) */
export function init(dependencies) {
  deps = dependencies;
  $('#watches-button').addEventListener('click', () => show());
  $('#watch-add-form').addEventListener('submit', (event) => {
    event.preventDefault();
    add();
  });
  $('#watches-close').addEventListener('click', () => dialogs.close($('#watches-dialog')));
  dialogs.onClose($('#watches-dialog'), () => {}, () => $('#watches-button'));
}

const RADII = [250, 500, 1000, 2000, 5000, 10000, 50000];

function distance(metres) {
  return metres >= 1000 ? `${metres / 1000} km` : `${metres} m`;
}

function radiusSelect(current, label) {
  const select = el('select', { className: 'watch-radius', attrs: { 'aria-label': label } });
  const choices = RADII.includes(current) ? RADII : [...RADII, current].sort((a, b) => a - b);
  for (const metres of choices) {
    const option = el('option', { value: String(metres), text: distance(metres) });
    if (metres === current) option.selected = true;
    select.append(option);
  }
  return select;
}

async function show() {
  const dialog = $('#watches-dialog');
  dialogs.open(dialog, $('#watch-label'));
  await reload();
}

async function reload() {
  const list = $('#watches-list');
  $('#watches-status').textContent = 'Loading…';
  try {
    const { items } = await api.get('/v1/me/watches');
    list.replaceChildren(...items.map(item));
    $('#watches-status').textContent = items.length ? '' : 'You watch no areas yet.';
  } catch (error) {
    $('#watches-status').textContent = '';
    dialogs.setError($('#watches-dialog'), error.message);
  }
}

function item(watch) {
  const name = watch.label ?? 'Unnamed area';
  const label = el('input', { className: 'watch-label', value: watch.label ?? '', maxLength: 60, attrs: { 'aria-label': `Name of ${name}` } });
  const radius = radiusSelect(watch.radius_m, `Radius of ${name}`);
  const save = el('button', { type: 'button', className: 'button small watch-save', text: 'Save' });
  const remove = el('button', { type: 'button', className: 'button small subtle watch-delete', text: 'Stop watching' });
  const where = el('span', { className: 'muted watch-where', text: `${watch.lat.toFixed(4)}, ${watch.lng.toFixed(4)}` });
  const row = el('li', { className: 'watch', dataset: { watchId: watch.id } }, label, radius, where, save, remove);
  save.addEventListener('click', async () => {
    try {
      await api.patch(`/v1/me/watches/${watch.id}`, { label: label.value.trim() || null, radius_m: Number(radius.value) });
      deps.announce(`${label.value.trim() || 'The area'} is saved.`);
      await reload();
    } catch (error) {
      dialogs.setError($('#watches-dialog'), error.message);
    }
  });
  remove.addEventListener('click', async () => {
    try {
      await api.del(`/v1/me/watches/${watch.id}`);
      deps.announce(`You no longer watch ${name}.`);
      await reload();
    } catch (error) {
      dialogs.setError($('#watches-dialog'), error.message);
    }
  });
  return row;
}

async function add() {
  const dialog = $('#watches-dialog');
  const here = deps.here();
  const label = $('#watch-label').value.trim();
  dialogs.setBusy(dialog, true);
  try {
    await api.post('/v1/me/watches', {
      near: `${here.lat.toFixed(6)},${here.lng.toFixed(6)}`, radius_m: Number($('#watch-radius').value), ...(label ? { label } : {}),
    });
    $('#watch-label').value = '';
    deps.announce(`You now watch ${label || 'this area'}.`);
    await reload();
  } catch (error) {
    dialogs.setError(dialog, error.message);
  } finally {
    dialogs.setBusy(dialog, false);
  }
}
