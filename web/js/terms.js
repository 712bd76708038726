// The tenant's terms of use and contact (App Store Review Guideline 1.2 asks for both in
// apps that publish what users write). Where the operator requires the terms, the service
// refuses notes and places (403 terms_not_accepted) until the user accepts the current
// version; the app asks first, and asks again whenever the service says so (a new version
// published while the page is open).

import * as api from './api.js';
import * as dialogs from './dialogs.js';
import { $ } from './dom.js';

let deps = null;
let tenant = null;      // GET /v1/tenant's answer
let accepted = true;    // until known otherwise: the service enforces the terms itself
let waiting = [];       // resolvers of ready() calls made while the prompt is up
let generation = 0;     // bumped on sign-out, so a late answer changes nothing

/** init({announce(text), showError(error)}) */
export function init(dependencies) {
  deps = dependencies;
  const dialog = $('#terms-dialog');
  $('#terms-form').addEventListener('submit', (event) => {
    event.preventDefault();
    accept();
  });
  $('#terms-later').addEventListener('click', () => dialogs.close(dialog));
  dialogs.onClose(dialog, () => settle(accepted), () => $('#map'));
  api.onProblem((error) => {
    if (error.code === 'terms_not_accepted') needed();
  });
}

function setState(state) {
  document.body.dataset.terms = state;
}

/** After signing in: the tenant's terms and contact, and the prompt when `me` accepted another version. */
export async function check(me) {
  const mine = ++generation;
  setState('unknown');
  try {
    const info = await api.get('/v1/tenant');
    if (mine !== generation) return;
    show(info);
    accepted = !info.terms_required || me.terms_version === info.terms_version;
    setState(accepted ? 'accepted' : 'pending');
    if (!accepted) prompt();
  } catch (error) {
    // Unknown, the app lets the user try: a write then meets 403 and the prompt.
    if (mine === generation) deps.showError(error);
  }
}

/**
 * Before a write: true at once when the user may write; otherwise the prompt, and
 * true once they accept (false if they close it).
 */
export function ready() {
  if (accepted) return Promise.resolve(true);
  return new Promise((resolve) => {
    waiting.push(resolve);
    prompt();
  });
}

function settle(value) {
  const resolvers = waiting;
  waiting = [];
  for (const resolve of resolvers) resolve(value);
}

// The service refused a write: the terms are required, and maybe a new version is out.
async function needed() {
  const mine = generation;
  accepted = false;
  setState('pending');
  try {
    const info = await api.get('/v1/tenant');
    if (mine !== generation) return;
    show(info);
  } catch {
    // The version already known is still worth asking about; a wrong one is answered 422.
  }
  if (mine === generation && !accepted) prompt();
}

function prompt() {
  const dialog = $('#terms-dialog');
  const link = $('#terms-link');
  link.hidden = !tenant?.terms_url;
  if (tenant?.terms_url) link.href = tenant.terms_url;
  $('#terms-version').textContent = tenant?.terms_version ? `Version ${tenant.terms_version}.` : '';
  if (!dialog.open) dialogs.open(dialog, $('#terms-accept'));
}

async function accept() {
  const dialog = $('#terms-dialog');
  const mine = generation;
  dialogs.setBusy(dialog, true);
  try {
    await api.post('/v1/me/terms', { version: tenant?.terms_version ?? '' });
    if (mine !== generation) return;
    accepted = true;
    setState('accepted');
    deps.announce('Thank you: you accepted the terms of use.');
    dialogs.close(dialog);
  } catch (error) {
    if (error.status === 422) {
      // A newer version was published since the prompt opened: show that one.
      try { show(await api.get('/v1/tenant')); } catch { /* the message below still holds */ }
      prompt();
      dialogs.setError(dialog, 'The terms of use changed meanwhile. Please read the new version, then accept it.');
    } else {
      dialogs.setError(dialog, error.message);
    }
  } finally {
    dialogs.setBusy(dialog, false);
  }
}

// The tenant's published contact, in the account bar: a page, else an email address.
function show(info) {
  tenant = info;
  const link = $('#contact-link');
  const href = info.contact_url || (info.contact_email ? `mailto:${info.contact_email}` : '');
  link.hidden = !href;
  if (href) {
    link.href = href;
    link.title = info.contact_url ? `Contact ${info.name}` : `Email ${info.contact_email}`;
  } else {
    link.removeAttribute('href');
  }
}

/** Signed out: nothing is known about the next user. */
export function reset() {
  generation += 1;
  accepted = true;
  tenant = null;
  settle(false);
  delete document.body.dataset.terms;
  const link = $('#contact-link');
  link.hidden = true;
  link.removeAttribute('href');
}
