// Starts the app: reads the deployment's configuration, finds out whether
// someone is signed in, and wires the views together.

import * as api from './api.js';
import * as session from './session.js';
import * as prefs from './prefs.js';
import * as store from './store.js';
import * as mapView from './map.js';
import * as notes from './notes.js';
import * as photos from './photos.js';
import * as list from './list.js';
import * as search from './search.js';
import * as places from './places.js';
import * as live from './live.js';
import * as dialogs from './dialogs.js';
import * as safety from './safety.js';
import * as watches from './watches.js';
import * as terms from './terms.js';
import * as profile from './profile.js';
import * as moderation from './moderation.js';
import * as recovery from './recovery.js';
import { watchPosition } from './geo.js';
import { startProviderSignIn, takeProviderReturn } from './provider-sign-in.js';
import { $, el, narrowScreen } from './dom.js';

const body = document.body;
let config = { tenant: null, tiles: { url: '', attribution: '' }, signIn: [] };
let signedInAs = null; // the user's id while signed in
let stopWatching = null;
let mapReady = false;

window.lrApp = { get map() { return mapView.getMap(); } };

// ——— messages ———

function showError(error) {
  if (!error || api.isAbort(error)) return;
  $('#alert').textContent = error.message || String(error);
  $('#alert').hidden = false;
  $('#alert-bar').hidden = false;
}

function clearError() {
  $('#alert').textContent = '';
  $('#alert').hidden = true;
  $('#alert-bar').hidden = true;
}

function announce(text) {
  const region = $('#announcer');
  region.textContent = '';
  // A fresh text node, so a repeated message is read again.
  requestAnimationFrame(() => { region.textContent = text; });
}

// ——— configuration and boot ———

async function loadConfig() {
  api.busy(+1);
  try {
    const response = await fetch('/app-config.json', { cache: 'no-store', credentials: 'omit' });
    if (response.ok) {
      const value = await response.json();
      config = {
        tenant: value.tenant || null,
        tiles: { url: value.tiles?.url || '', attribution: value.tiles?.attribution || '' },
        signIn: Array.isArray(value.sign_in) ? value.sign_in : [],
      };
    }
  } catch {
    // Without a configuration: ask for the app's name, draw no tiles.
  } finally {
    api.busy(-1);
  }
}

function tenantForSignIn() {
  if (config.tenant) return config.tenant;
  return $('#tenant-input').value.trim();
}

async function boot() {
  body.dataset.loading = '0';
  await loadConfig();
  // The service tells people apart per app; ask which one only when the deployment does not say.
  if (config.tenant) $('#tenant-field').remove();
  else {
    $('#tenant-field').hidden = false;
    $('#tenant-input').value = prefs.lastTenant();
  }
  api.setTenant(config.tenant || prefs.lastTenant());
  $('#distance-select').value = prefs.distance();
  wireAuth();
  wireApp();

  // Back from a provider's sign-in page: exchange its ID token before anything else.
  let returned = null;
  try {
    returned = takeProviderReturn();
  } catch (error) {
    showError(error);
  }
  if (returned) {
    session.clear();
    await signIn('/v1/auth/id-token', returned);
    if (session.current()) {
      body.dataset.ready = 'true';
      return;
    }
  }

  let stored = session.current();
  if (stored && config.tenant && stored.tenant && stored.tenant !== config.tenant) {
    // Tokens of another app than the one this deployment serves.
    session.clear();
    stored = null;
  }
  let me = null;
  if (stored) {
    try {
      me = await api.get('/v1/me');
      session.updateUser({ id: me.id, username: me.username, guest: me.guest });
    } catch (error) {
      if (error.status === 401) stored = null;
      // Otherwise (offline, service busy) keep the session: it may well still be good.
    }
  }
  if (stored && session.current()) enterApp(me);
  else leaveApp();
  body.dataset.ready = 'true';
}

// ——— signing in and out ———

async function signIn(path, payload) {
  const tenant = tenantForSignIn();
  if (!tenant) {
    showError(new Error('Enter the name of the app you want to sign in to.'));
    $('#tenant-input')?.focus();
    return;
  }
  api.setTenant(tenant);
  const buttons = document.querySelectorAll('#auth button');
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const tokens = await api.post(path, payload, { auth: false });
    session.save(tokens, tenant);
    if (!config.tenant) prefs.setLastTenant(tenant);
    clearError();
    $('#login-password').value = '';
    $('#signup-password').value = '';
    enterApp();
  } catch (error) {
    showError(error);
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

function showAuthForm(which) {
  $('#login-form').hidden = which !== 'login';
  $('#signup-form').hidden = which !== 'signup';
  $('#forgot-form').hidden = which !== 'forgot';
  $({ login: '#login-username', signup: '#signup-username', forgot: '#forgot-login' }[which]).focus();
}

function wireAuth() {
  $('#login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    signIn('/v1/auth/login', { username: $('#login-username').value.trim(), password: $('#login-password').value });
  });
  $('#signup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const payload = { username: $('#signup-username').value.trim(), password: $('#signup-password').value };
    const email = $('#signup-email').value.trim();
    if (email) payload.email = email;
    signIn('/v1/auth/signup', payload);
  });
  $('#show-signup').addEventListener('click', (event) => { event.preventDefault(); showAuthForm('signup'); });
  $('#show-login').addEventListener('click', (event) => { event.preventDefault(); showAuthForm('login'); });
  recovery.wireForgot({
    tenant: tenantForSignIn,
    showForm: showAuthForm,
    problem: showError,
    signedIn: (tokens) => {
      const tenant = tenantForSignIn();
      session.save(tokens, tenant);
      clearError();
      showAuthForm('login');
      enterApp();
    },
  });
  $('#guest-button').addEventListener('click', () => signIn('/v1/auth/guest', undefined));
  showProviderButtons();
  $('#logout-button').addEventListener('click', () => logOut());
  $('#alert-dismiss').addEventListener('click', () => clearError());

  api.onSessionEnded(() => {
    if (!signedInAs) return;
    leaveApp();
    showError(new Error('Your session has ended. Please log in again.'));
  });
  session.onOtherTabChange((now) => {
    if (!now && signedInAs) leaveApp();
    else if (now && !signedInAs) enterApp();
    else if (now && now.user?.id !== signedInAs) window.location.reload();
  });
}

/** "Sign in with …" for each provider the deployment offers (LR_WEB_SIGN_IN_*). */
function showProviderButtons() {
  const container = $('#provider-buttons');
  container.replaceChildren(...config.signIn.map((provider) => {
    const button = el('button', {
      type: 'button', className: 'button', id: `provider-${provider.provider.replace(':', '-')}`,
      text: `Sign in with ${provider.label}`,
    });
    button.addEventListener('click', () => {
      const tenant = tenantForSignIn();
      if (!tenant) {
        showError(new Error('Enter the name of the app you want to sign in to.'));
        $('#tenant-input')?.focus();
        return;
      }
      // The page unloads; the tenant must still be known when the provider sends us back.
      if (!config.tenant) prefs.setLastTenant(tenant);
      startProviderSignIn(provider).catch(showError);
    });
    return button;
  }));
  container.hidden = config.signIn.length === 0;
}

async function logOut() {
  live.stop();
  try {
    await api.post('/v1/auth/logout');
  } catch {
    // The tokens are forgotten here either way; the service expires them.
  }
  session.clear();
  leaveApp();
  announce('You are logged out.');
}

/** me: GET /v1/me's answer when the caller has it already. */
function enterApp(me = null) {
  const current = session.current();
  signedInAs = current.user?.id ?? 'unknown';
  body.dataset.signedIn = 'true';
  $('#auth').hidden = true;
  $('#app').hidden = false;
  $('#account').hidden = false;
  $('#whoami').textContent = current.user?.username ?? '';
  setView(narrowScreen() ? 'map' : 'list', { focus: false });
  if (!mapReady) {
    mapView.init({
      container: $('#map'),
      tiles: config.tiles,
      popupFor: (note) => notes.popupFor(note),
      onSpot: (at) => notes.openNew(at, 'spot'),
      onError: showError,
      onFollowChange: followChanged,
      hintNode: $('#map-hint'),
    });
    mapReady = true;
  }
  mapView.resized();
  followChanged(mapView.isFollowing());
  startGeolocation();
  live.start(onLiveEvent);
  refreshAll();
  loadAccount(me);
}

// What the account says beyond the sign-in: the terms it accepted, whether it moderates.
async function loadAccount(me) {
  const user = signedInAs;
  try {
    me ??= await api.get('/v1/me');
  } catch (error) {
    // Unknown for now: the service still enforces the terms, and the button waits for the next sign-in.
    showError(error);
    return;
  }
  if (signedInAs !== user) return;
  terms.check(me);
  moderation.setup(me);
  recovery.checkVerification(me, { problem: showError });
}

function leaveApp() {
  signedInAs = null;
  live.stop();
  // No one is signed in: stop asking for the position, and keep no trace of where the
  // last user was (the next person on this device opens the map elsewhere).
  stopWatching?.();
  stopWatching = null;
  prefs.setLastView(null);
  for (const dialog of document.querySelectorAll('dialog')) dialogs.close(dialog);
  terms.reset();
  moderation.reset();
  if (mapReady) mapView.reset();
  list.reset();
  places.reset();
  search.reset();
  store.clear();
  body.dataset.signedIn = 'false';
  $('#app').hidden = true;
  $('#account').hidden = true;
  $('#whoami').textContent = '';
  $('#auth').hidden = false;
  $('#login-form').hidden = false;
  $('#signup-form').hidden = true;
  $('#forgot-form').hidden = true;
  $('#verify-banner').hidden = true;
}

function refreshAll() {
  if (!signedInAs) return;
  list.reload();
  places.reload();
  mapView.load();
}

// ——— live changes ———

function onLiveEvent(type, data) {
  switch (type) {
    case 'note.created':
    case 'note.updated':
      store.put(data, 'live');
      break;
    case 'note.deleted':
      store.remove(data.id, 'live');
      break;
    case 'place.created':
    case 'place.updated':
      places.placePut(data);
      break;
    case 'place.deleted':
      places.placeRemoved(data.id);
      break;
    case 'reset':
    case 'resync':
      // Events were missed (or may have been, before the stream opened): fetch it all again.
      refreshAll();
      break;
    default:
  }
}

// A moderator's decision, on this screen at once (the stream says the same a moment later).
function decided(item, action) {
  if (action === 'dismiss') return;
  const { type, id } = item.target;
  if (type === 'note') store.remove(id, 'local');
  if (type === 'place') places.placeRemoved(id);
  if (action !== 'remove' && item.author) safety.hideNotesBy(item.author.id);
}

// ——— position and following ———

function startGeolocation() {
  if (stopWatching) return;
  $('#geo-status').textContent = 'Finding your position…';
  stopWatching = watchPosition((fix) => {
    $('#geo-status').textContent = '';
    if (!signedInAs) return;
    mapView.setMyPosition(fix);
    list.positionMoved(fix);
    places.positionMoved(fix);
  }, (message) => {
    if (mapView.here().known) return;
    $('#geo-status').textContent = `${message} Distances are measured from the map's centre.`;
  });
}

function followChanged(on) {
  body.dataset.following = String(on);
  $('#follow-button').setAttribute('aria-pressed', String(on));
  $('#follow-button').title = on ? 'Following your position' : 'Follow my position';
}

// ——— views ———

const VIEWS = ['map', 'list', 'places'];

function setView(view, { focus = true } = {}) {
  body.dataset.view = view;
  for (const name of VIEWS) {
    const tab = $(`#tab-${name}`);
    const selected = name === view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focus) tab.focus();
  }
  // Leaflet measures its box, which changes when panels come and go: now, and
  // once more after the next layout to be sure.
  mapView.resized();
  requestAnimationFrame(() => mapView.resized());
}

function wireTabs() {
  for (const name of VIEWS) {
    $(`#tab-${name}`).addEventListener('click', () => setView(name, { focus: false }));
  }
  $('.tabs').addEventListener('keydown', (event) => {
    const index = VIEWS.indexOf(body.dataset.view);
    let next = null;
    if (event.key === 'ArrowRight') next = VIEWS[(index + 1) % VIEWS.length];
    if (event.key === 'ArrowLeft') next = VIEWS[(index + VIEWS.length - 1) % VIEWS.length];
    if (event.key === 'Home') next = VIEWS[0];
    if (event.key === 'End') next = VIEWS[VIEWS.length - 1];
    if (next) {
      event.preventDefault();
      setView(next);
    }
  });
}

function openNoteOnMap(note) {
  if (narrowScreen()) setView('map', { focus: false });
  requestAnimationFrame(() => mapView.focusNote(note));
}

function wireApp() {
  wireTabs();
  notes.init({
    here: () => mapView.here(),
    showError,
    announce,
    placeName: (id) => places.name(id),
    newPlaceAt: (at) => places.openNew(at, 'spot'),
  });
  list.init({
    here: () => mapView.here(),
    onOpen: openNoteOnMap,
    onSearchResults: (found) => mapView.goTo(found[0]),
    showError,
  });
  search.init();
  photos.init({ showError, announce });
  safety.init({ showError, announce });
  watches.init({ here: () => mapView.here(), announce });
  terms.init({ showError, announce });
  profile.init();
  moderation.init({ showError, announce, onDecided: decided });
  places.init({
    here: () => mapView.here(),
    showError,
    announce,
    onShowPlace: (place) => mapView.showPlace(place),
    onHidePlace: () => mapView.clearPlace(),
    onOpenNote: openNoteOnMap,
  });
  $('#follow-button').addEventListener('click', () => {
    mapView.setFollowing(true);
    if (!mapView.here().known) announce('Your position is not known yet.');
  });
  $('#new-note-button').addEventListener('click', () => {
    const here = mapView.here();
    notes.openNew(here, here.known ? 'position' : 'centre');
  });
  $('#distance-select').addEventListener('change', (event) => {
    prefs.setDistance(event.target.value);
    list.reload();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') live.nudge();
  });
  window.addEventListener('online', () => live.nudge());
  window.matchMedia('(max-width: 799px)').addEventListener('change', () => mapView.resized());
}

boot().catch((error) => {
  showError(error);
  body.dataset.ready = 'true';
});
