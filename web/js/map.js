// The map: my position (followed until I pan away), note pins when zoomed in,
// the service's clusters when zoomed out, and the place I picked. What it
// shows is refetched for the viewport after each move.

import * as L from '/vendor/leaflet/leaflet.esm.js';
import * as api from './api.js';
import * as store from './store.js';
import * as prefs from './prefs.js';
import { bboxParam, wrapLng } from './geo.js';
import { el, debounce } from './dom.js';
import { truncate } from './format.js';

export const NOTES_ZOOM = 14;
const FOCUS_ZOOM = 16;
const NOTE_LIMIT = 200;
const DETAIL_CONCURRENCY = 4;

let map = null;
let options = null;
let noteLayer = null;
let clusterLayer = null;
let meMarker = null;
let keyboardOpened = false;
let accuracyCircle = null;
let placeMarker = null;
let myFix = null;
let following = true;
let mode = null; // 'notes' | 'clusters', whichever the last load showed
let loadController = null;
let hint = null;
const pins = new Map(); // note id -> L.Marker

export function getMap() {
  return map;
}

/**
 * init({container, tiles, popupFor(note) -> Element, onSpot(latlng),
 *       onError(error), onFollowChange(bool), hintNode})
 */
export function init(opts) {
  options = opts;
  hint = opts.hintNode;
  const view = prefs.lastView() ?? { lat: 20, lng: 0, zoom: 2 };
  map = L.map(opts.container, {
    center: [view.lat, view.lng],
    zoom: view.zoom,
    worldCopyJump: true,
    // Popups of deleted notes vanish at once instead of fading for 200 ms with focus inside.
    fadeAnimation: false,
    // A drag stops where it is let go: "stop following" then means the view stays put.
    inertia: false,
    zoomControl: true,
    keyboard: true,
    tap: true,
  });
  if (opts.tiles?.url) {
    L.tileLayer(opts.tiles.url, { attribution: opts.tiles.attribution || '', maxZoom: 19 }).addTo(map);
  } else {
    // No tiles (offline, tests): a plain grid, so a pan or zoom is still visible.
    const Grid = L.GridLayer.extend({ createTile: () => el('div', { className: 'offline-tile' }) });
    new Grid({ maxZoom: 22 }).addTo(map);
    map.setMaxZoom(19);
  }
  noteLayer = L.layerGroup().addTo(map);
  clusterLayer = L.layerGroup().addTo(map);

  map.on('dragstart', () => setFollowing(false));
  map.getContainer().addEventListener('keydown', (event) => {
    // The arrow keys pan the map like a drag does.
    if (event.target === map.getContainer() && event.key.startsWith('Arrow')) setFollowing(false);
    // Leaflet closes popups on Escape only while the map itself has focus, not a pin or the popup.
    if (event.key === 'Escape' && map.getContainer().querySelector('.leaflet-popup')) {
      const source = openPopupSource();
      map.closePopup();
      source?.getElement()?.focus();
    }
  });
  // Every popup's close button gets a name (Leaflet's is a bare "×"); a popup opened from
  // the keyboard takes the focus, so its buttons come next rather than after every pin.
  map.on('popupopen', (event) => {
    const container = event.popup.getElement();
    container?.querySelector('.leaflet-popup-close-button')?.setAttribute('aria-label', 'Close');
    if (keyboardOpened) {
      keyboardOpened = false;
      (container?.querySelector('button, a[href]:not(.leaflet-popup-close-button)') ?? container)?.focus();
    }
  });
  map.on('contextmenu', (event) => {
    opts.onSpot?.({ lat: event.latlng.lat, lng: wrapLng(event.latlng.lng) });
  });
  // A move's end starts a load: count the move as work in flight.
  map.on('movestart zoomstart', () => api.busyFlag('map-move', true));
  map.on('moveend', () => {
    api.busyFlag('map-move', false);
    const c = map.getCenter();
    prefs.setLastView({ lat: c.lat, lng: wrapLng(c.lng), zoom: map.getZoom() });
    scheduleLoad();
  });

  store.on('put', ({ note, origin }) => notePut(note, origin));
  store.on('remove', ({ id, previous }) => noteRemoved(id, previous));
  store.on('clear', () => clearNotes());
  return map;
}

// Moves come in bursts (a drag, a zoom animation, a follow): load once they settle.
const scheduleLoad = debounce(() => load(), 250, { onSchedule: () => api.busy(+1), onSettle: () => api.busy(-1) });
const scheduleClusterReload = debounce(() => { if (mode === 'clusters') load(); }, 500,
  { onSchedule: () => api.busy(+1), onSettle: () => api.busy(-1) });

/** Loads what the current viewport shows, now; a load still running is dropped. */
export async function load() {
  if (!map) return;
  scheduleLoad.cancel();
  // A hidden map (the list tab on a phone) has no viewport; it loads when shown again.
  if (!map.getSize().x || !map.getSize().y) return;
  loadController?.abort();
  const controller = new AbortController();
  loadController = controller;
  const zoom = Math.round(map.getZoom());
  const b = map.getBounds();
  const bbox = bboxParam(b.getWest(), b.getSouth(), b.getEast(), b.getNorth());
  try {
    if (zoom >= NOTES_ZOOM) {
      const page = await api.get('/v1/notes', { query: { bbox, limit: NOTE_LIMIT }, signal: controller.signal });
      if (controller.signal.aborted) return;
      store.putAll(page.items);
      showNotes(page.items);
      setHint(page.next_cursor ? `Showing the newest ${NOTE_LIMIT} notes here. Zoom in to see them all.` : '');
    } else {
      const answer = await api.get('/v1/notes/clusters', { query: { bbox, zoom }, signal: controller.signal });
      if (controller.signal.aborted) return;
      showClusters(answer.clusters, controller.signal);
      setHint('');
    }
  } catch (error) {
    if (api.isAbort(error) || controller.signal.aborted) return;
    if (error.code === 'query_too_broad') {
      clearNotes();
      setHint('Zoom in to see the notes here.');
      return;
    }
    options.onError?.(error);
  } finally {
    if (loadController === controller) loadController = null;
  }
}

function setHint(text) {
  if (!hint) return;
  hint.textContent = text;
  hint.hidden = !text;
}

// The copy of a longitude nearest the view's centre, so pins show on the
// world copy being looked at (across the antimeridian, the next world over).
function nearCopy(lng) {
  const centre = map.getCenter().lng;
  return lng + 360 * Math.round((centre - lng) / 360);
}

function ownerClass(note) {
  if (!note) return 'pending';
  return note.is_mine ? 'mine' : 'others';
}

// A pin's look lives in a child element (shape and colour per owner, see app.css),
// since Leaflet positions the icon element itself with a transform.
function pinIcon(note) {
  const classes = ['note-marker', ownerClass(note), note?.visibility === 'private' ? 'private' : ''];
  return L.divIcon({
    className: classes.filter(Boolean).join(' '),
    html: el('span', { className: 'pin', attrs: { 'aria-hidden': 'true' } }),
    iconSize: [30, 30], iconAnchor: [15, 15], popupAnchor: [0, -12],
  });
}

// A cluster of one note: shaped and coloured like that note's pin and opening its
// popup, but still a cluster of the zoomed-out view (data-count 1), so the counts
// of the clusters on screen add up to the notes in view.
function singleIcon(note) {
  return L.divIcon({
    className: `cluster-marker single ${ownerClass(note)}`,
    html: el('span', { className: 'pin' }, el('span', { className: 'cluster-count', text: '1' })),
    iconSize: [30, 30], iconAnchor: [15, 15], popupAnchor: [0, -12],
  });
}

function noteLabel(note) {
  if (!note) return 'Note';
  const who = note.is_mine ? 'Your note' : `Note by ${note.author?.username ?? 'someone'}`;
  const text = truncate(note.body, 58);
  return `${who}: ${text}`;
}

function decoratePin(marker, id) {
  const icon = marker.getElement();
  if (!icon) return;
  const note = store.get(id);
  icon.dataset.noteId = id;
  if (marker.single) icon.dataset.count = '1';
  icon.setAttribute('role', 'button');
  icon.setAttribute('aria-label', noteLabel(note));
  icon.title = noteLabel(note);
}

function makePin(id, lat, lng, single = false) {
  const note = store.get(id);
  const marker = L.marker([lat, nearCopy(lng)], {
    icon: single ? singleIcon(note) : pinIcon(note),
    keyboard: true,
    riseOnHover: true,
  });
  marker.noteId = id;
  marker.single = single;
  marker.bindPopup(() => options.popupFor(store.get(id) ?? { id }), { maxWidth: 300, minWidth: 200, autoPanPadding: [24, 24] });
  marker.on('add', () => {
    decoratePin(marker, id);
    marker.getElement()?.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        keyboardOpened = true;
        marker.openPopup();
      }
    });
  });
  return marker;
}

function openPopupSource() {
  for (const marker of pins.values()) if (marker.isPopupOpen()) return marker;
  return null;
}

function refreshPin(marker, note) {
  // A cluster of one may sit a little off its note so as not to cover a neighbour.
  if (!marker.single) marker.setLatLng([note.lat, nearCopy(note.lng)]);
  marker.setIcon(marker.single ? singleIcon(note) : pinIcon(note));
  decoratePin(marker, note.id);
  if (marker.isPopupOpen()) marker.getPopup().update();
}

function showNotes(items) {
  mode = 'notes';
  clusterLayer.clearLayers();
  const wanted = new Set(items.map((n) => n.id));
  for (const [id, marker] of pins) {
    // The pin whose popup is open stays: it may have been opened from the list.
    if (!wanted.has(id) && !marker.isPopupOpen()) {
      marker.remove();
      pins.delete(id);
    }
  }
  for (const note of items) {
    let existing = pins.get(note.id);
    if (existing?.single) {
      existing.remove();
      pins.delete(note.id);
      existing = null;
    }
    if (existing) {
      if (!noteLayer.hasLayer(existing)) existing.addTo(noteLayer);
      refreshPin(existing, store.get(note.id) ?? note);
    } else {
      const marker = makePin(note.id, note.lat, note.lng);
      pins.set(note.id, marker);
      marker.addTo(noteLayer);
    }
  }
}

function clusterSize(count) {
  if (count < 10) return 's';
  if (count < 100) return 'm';
  if (count < 1000) return 'l';
  return 'xl';
}

const CLUSTER_RADIUS = { s: 17, m: 21, l: 26, xl: 31 };
const SINGLE_RADIUS = 15;

/**
 * Where to draw each cluster: at its centroid, unless it would cover another
 * one (the centroids of neighbouring grid cells can be a few pixels apart);
 * then overlapping circles are pushed apart until each can be seen and tapped.
 */
function spreadOut(clusters) {
  const items = clusters.map((cluster) => {
    const single = cluster.count === 1 && cluster.note_id;
    return {
      point: map.latLngToLayerPoint([cluster.lat, nearCopy(cluster.lng)]),
      radius: (single ? SINGLE_RADIUS : CLUSTER_RADIUS[clusterSize(cluster.count)]) + 2,
    };
  });
  for (let round = 0; round < 12; round += 1) {
    let moved = false;
    for (let i = 0; i < items.length; i += 1) {
      for (let j = i + 1; j < items.length; j += 1) {
        const a = items[i];
        const b = items[j];
        const dx = b.point.x - a.point.x;
        const dy = b.point.y - a.point.y;
        const distance = Math.hypot(dx, dy);
        const overlap = a.radius + b.radius - distance;
        if (overlap <= 0) continue;
        // Same spot: part them along an arbitrary but stable direction.
        const ux = distance ? dx / distance : Math.cos(i + j);
        const uy = distance ? dy / distance : Math.sin(i + j);
        const push = overlap / 2 + 0.5;
        a.point = L.point(a.point.x - ux * push, a.point.y - uy * push);
        b.point = L.point(b.point.x + ux * push, b.point.y + uy * push);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return items.map((item) => map.layerPointToLatLng(item.point));
}

function showClusters(clusters, signal) {
  mode = 'clusters';
  clusterLayer.clearLayers();
  noteLayer.clearLayers();
  pins.clear();
  const unknown = [];
  const places = spreadOut(clusters);
  clusters.forEach((cluster, index) => {
    const at = places[index];
    if (cluster.count === 1 && cluster.note_id) {
      const marker = makePin(cluster.note_id, at.lat, at.lng, true);
      pins.set(cluster.note_id, marker);
      marker.addTo(noteLayer);
      if (!store.get(cluster.note_id)) unknown.push(cluster.note_id);
      return;
    }
    const size = clusterSize(cluster.count);
    const label = `${cluster.count} notes here. Zoom in.`;
    const marker = L.marker(at, {
      icon: L.divIcon({
        className: `cluster-marker size-${size}`,
        html: el('span', { className: 'cluster-count', text: String(cluster.count) }),
        iconSize: null,
      }),
      keyboard: true,
      title: label,
    });
    marker.on('add', () => {
      const icon = marker.getElement();
      icon.dataset.count = String(cluster.count);
      icon.setAttribute('role', 'button');
      icon.setAttribute('aria-label', label);
      icon.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          zoomInto(cluster);
        }
      });
    });
    marker.on('click', () => zoomInto(cluster));
    marker.addTo(clusterLayer);
  });
  fetchDetails(unknown, signal);
}

function zoomInto(cluster) {
  setFollowing(false);
  const zoom = Math.min(map.getMaxZoom(), Math.max(Math.round(map.getZoom()) + 2, 3));
  map.setView([cluster.lat, nearCopy(cluster.lng)], zoom);
}

// Single-note clusters carry only an id: fetch those notes, a few at a time,
// so their pins can say whose they are.
async function fetchDetails(ids, signal) {
  const queue = [...ids];
  const worker = async () => {
    while (queue.length && !signal.aborted) {
      const id = queue.shift();
      try {
        const note = await api.get(`/v1/notes/${encodeURIComponent(id)}`, { signal });
        store.put(note, 'fetch');
      } catch (error) {
        if (api.isAbort(error)) return;
        // A note deleted meanwhile: the next load drops its pin.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(DETAIL_CONCURRENCY, queue.length) }, worker));
}

function inView(note) {
  const b = map.getBounds();
  return b.contains([note.lat, nearCopy(note.lng)]);
}

function notePut(note, origin) {
  if (!map) return;
  const marker = pins.get(note.id);
  if (marker) {
    refreshPin(marker, note);
    return;
  }
  if (mode === 'notes' && inView(note)) {
    const pin = makePin(note.id, note.lat, note.lng);
    pins.set(note.id, pin);
    pin.addTo(noteLayer);
  } else if (mode === 'clusters' && origin !== 'fetch' && inView(note)) {
    scheduleClusterReload();
  }
}

function noteRemoved(id, previous) {
  const marker = pins.get(id);
  if (marker) {
    marker.remove();
    pins.delete(id);
  }
  // A note never seen here may still be counted in a cluster on screen.
  if (mode === 'clusters' && (!previous || inView(previous))) scheduleClusterReload();
}

function clearNotes() {
  noteLayer?.clearLayers();
  clusterLayer?.clearLayers();
  pins.clear();
}

/** Empties the map for the next user. */
export function reset() {
  loadController?.abort();
  clearNotes();
  clearPlace();
  mode = null;
  // The next user's position is theirs to share.
  meMarker?.remove();
  meMarker = null;
  myFix = null;
}

// ——— my position and following ———

export function isFollowing() {
  return following;
}

export function setFollowing(on) {
  if (following === on) return;
  following = on;
  options?.onFollowChange?.(on);
  if (on && myFix) map.setView([myFix.lat, myFix.lng], Math.max(map.getZoom(), FOCUS_ZOOM));
}

export function setMyPosition(fix) {
  const first = !myFix;
  myFix = fix;
  const at = [fix.lat, fix.lng];
  if (!meMarker) {
    meMarker = L.marker(at, {
      icon: L.divIcon({ className: 'me-marker', iconSize: [22, 22], iconAnchor: [11, 11] }),
      keyboard: false,
      interactive: false,
      // Under the pins: a note where I stand must stay clickable.
      zIndexOffset: -1000,
      title: 'You are here',
    }).addTo(map);
    accuracyCircle = L.circle(at, {
      radius: fix.accuracy || 0, className: 'me-accuracy', interactive: false,
      color: '#2563eb', weight: 1, fillOpacity: 0.08,
    }).addTo(map);
  } else {
    meMarker.setLatLng(at);
    accuracyCircle.setLatLng(at).setRadius(fix.accuracy || 0);
  }
  meMarker.getElement()?.setAttribute('aria-label', 'You are here');
  if (following) {
    if (first) map.setView(at, Math.max(map.getZoom(), FOCUS_ZOOM));
    else map.panTo(at);
  }
}

/** Where notes are made and distances measured from: my fix, or the map's centre without one. */
export function here() {
  if (myFix) return { lat: myFix.lat, lng: myFix.lng, known: true };
  if (!map) return { lat: 0, lng: 0, known: false };
  const c = map.getCenter();
  return { lat: c.lat, lng: wrapLng(c.lng), known: false };
}

// ——— going to things ———

/** Shows a note: its pin, centred, with its popup open. */
export function focusNote(note) {
  setFollowing(false);
  const zoom = Math.max(Math.round(map.getZoom()), FOCUS_ZOOM);
  map.setView([note.lat, nearCopy(note.lng)], zoom);
  let marker = pins.get(note.id);
  if (!marker || mode !== 'notes') {
    // Before the viewport's load lands, draw it now; the load keeps it.
    mode = 'notes';
    clusterLayer.clearLayers();
    if (marker?.single) {
      marker.remove();
      marker = null;
    }
    marker = marker ?? makePin(note.id, note.lat, note.lng);
    pins.set(note.id, marker);
    if (!noteLayer.hasLayer(marker)) marker.addTo(noteLayer);
  }
  marker.openPopup();
}

/** Moves to a point (a search hit) without opening anything. */
export function goTo({ lat, lng }, zoom = FOCUS_ZOOM) {
  setFollowing(false);
  map.setView([lat, nearCopy(lng)], Math.max(Math.round(map.getZoom()), zoom));
}

export function showPlace(place) {
  clearPlace();
  setFollowing(false);
  placeMarker = L.marker([place.lat, nearCopy(place.lng)], {
    icon: L.divIcon({ className: `place-marker ${place.kind}`, iconSize: [30, 30], iconAnchor: [15, 30], popupAnchor: [0, -28] }),
    keyboard: true,
    title: place.name,
    zIndexOffset: 500,
  });
  placeMarker.on('add', () => {
    const icon = placeMarker.getElement();
    icon.dataset.placeId = place.id;
    icon.setAttribute('aria-label', `Place: ${place.name}`);
  });
  // An element, not a string: Leaflet would read a string as HTML, and names are typed by users.
  placeMarker.bindTooltip(el('span', { text: place.name }), { direction: 'top', offset: [0, -30] });
  placeMarker.addTo(map);
  map.setView([place.lat, nearCopy(place.lng)], Math.max(Math.round(map.getZoom()), FOCUS_ZOOM));
  placeMarker.openTooltip();
}

export function clearPlace() {
  placeMarker?.remove();
  placeMarker = null;
}

/** Leaflet measures its container; call after the map's box changed size or was shown. */
export function resized() {
  map?.invalidateSize();
}
