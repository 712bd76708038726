// The one way the app talks to the service: JSON in and out, the tenant and
// the access token on every call, problem+json turned into Errors people can
// read, and one silent token refresh when an access token has expired.

import * as session from './session.js';

let inFlight = 0;
const flags = new Set();
function showBusy() {
  document.body.dataset.loading = String(inFlight + flags.size);
}
/** Requests (and debounced fetches about to start) in flight, for tests and the busy cursor. */
export function busy(delta) {
  inFlight = Math.max(0, inFlight + delta);
  showBusy();
}
/** Work that is on or off rather than counted (a map animation, whose end starts a fetch). */
export function busyFlag(name, on) {
  if (on) flags.add(name);
  else flags.delete(name);
  showBusy();
}

export class ApiError extends Error {
  constructor(message, { status = 0, code = '', problem = null, retryAfter = null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

export const isAbort = (error) => error?.name === 'AbortError';

let fallbackTenant = null;
/** The tenant for calls made without a session: the deployment's, or the one typed in. */
export function setTenant(slug) {
  fallbackTenant = slug || null;
}

const problemListeners = new Set();
/** fn(apiError) runs for every problem the service answers, before the caller sees it
 * (the terms prompt opens on any 403 terms_not_accepted, whichever call met it). */
export function onProblem(fn) {
  problemListeners.add(fn);
}

const sessionEndedListeners = new Set();
/** fn() runs when the service ends the session (refresh refused): the app shows sign-in. */
export function onSessionEnded(fn) {
  sessionEndedListeners.add(fn);
}

function buildUrl(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value == null || value === '') continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function send(method, url, { body, signal, token, tenant, headers }) {
  const h = { Accept: 'application/json', ...headers };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  if (token) h.Authorization = `Bearer ${token}`;
  if (tenant) h['X-Tenant'] = tenant;
  busy(+1);
  try {
    return await fetch(url, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError('Cannot reach the service. Check your connection and try again.', { code: 'network' });
  } finally {
    busy(-1);
  }
}

// Problems whose detail speaks to developers (which calls to make); people get this instead.
const PLAIN = {
  terms_not_accepted: 'Please accept the terms of use first, then try again.',
};

async function problemOf(response) {
  const type = response.headers.get('Content-Type') || '';
  let problem = null;
  if (type.includes('json')) {
    try { problem = await response.json(); } catch { /* a body we cannot read says nothing */ }
  }
  const retry = Number(response.headers.get('Retry-After'));
  const message = PLAIN[problem?.code] || problem?.detail || problem?.title ||
    (response.status >= 500 ? 'The service is having trouble. Please try again in a moment.'
      : `The request failed (${response.status}).`);
  return new ApiError(message, {
    status: response.status,
    code: problem?.code || '',
    problem,
    retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null,
  });
}

async function readBody(response) {
  if (response.status === 204 || response.status === 304) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// One refresh at a time: concurrent 401s all wait for the same one, since a
// refresh token is spent by its first use.
let refreshing = null;

function refreshTokens() {
  refreshing ??= (async () => {
    const stored = session.current();
    if (!stored) return false;
    const response = await send('POST', '/v1/auth/refresh', {
      body: { refresh_token: stored.refresh_token }, tenant: stored.tenant,
    });
    if (response.ok) {
      session.save(await readBody(response), stored.tenant);
      return true;
    }
    if (response.status === 401 || response.status === 403 || response.status === 404) {
      // The session is over at the service; keeping the tokens would only fail again.
      if (session.current()?.refresh_token === stored.refresh_token) session.clear();
      for (const fn of sessionEndedListeners) fn();
      return false;
    }
    throw await problemOf(response);
  })().finally(() => { refreshing = null; });
  return refreshing;
}

/**
 * request('GET', '/v1/notes', {query, body, signal, auth, headers}) -> parsed JSON (null for 204);
 * with `withETag`, {value, etag}; with `asBlob`, the body as a Blob (a photo). Throws ApiError with the problem's detail as its message,
 * or an AbortError.
 */
export async function request(method, path, { query, body, signal, auth = true, headers = {}, withETag = false, asBlob = false } = {}) {
  const url = buildUrl(path, query);
  const stored = auth ? session.current() : null;
  const tenant = stored?.tenant || fallbackTenant;
  let response = await send(method, url, { body, signal, token: stored?.access_token, tenant, headers });

  if (response.status === 401 && stored) {
    // Another tab may have refreshed already: then its new token is worth a try as is.
    const now = session.current();
    const fresh = now && now.access_token !== stored.access_token ? true : await refreshTokens();
    if (!fresh) throw new ApiError('Your session has ended. Please log in again.', { status: 401, code: 'session_ended' });
    const retry = session.current();
    response = await send(method, url, { body, signal, token: retry?.access_token, tenant: retry?.tenant || tenant, headers });
    if (response.status === 401) {
      session.clear();
      for (const fn of sessionEndedListeners) fn();
    }
  }

  if (!response.ok) {
    const error = await problemOf(response);
    for (const fn of problemListeners) fn(error);
    throw error;
  }
  if (asBlob) return response.blob();
  if (withETag) return { value: await readBody(response), etag: response.headers.get('ETag') };
  return readBody(response);
}

export const get = (path, options) => request('GET', path, options);
export const post = (path, body, options = {}) => request('POST', path, { ...options, body });
export const patch = (path, body, options = {}) => request('PATCH', path, { ...options, body });
export const del = (path, options) => request('DELETE', path, options);

/** A photo variant's bytes, read with the session's token (an <img src> cannot send it). */
export const blob = (path) => request('GET', path, { asBlob: true });

/**
 * Sends a file as the body of POST `path` (a photo), reporting progress as onProgress(0…1):
 * fetch cannot tell how much of a body has gone, XMLHttpRequest can. The same refresh on
 * 401 as every other call; throws ApiError as they do.
 */
export async function uploadFile(path, file, { key, onProgress } = {}) {
  const send = (stored) => new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.responseType = 'text';
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
    if (stored?.access_token) xhr.setRequestHeader('Authorization', `Bearer ${stored.access_token}`);
    const tenant = stored?.tenant || fallbackTenant;
    if (tenant) xhr.setRequestHeader('X-Tenant', tenant);
    if (key) xhr.setRequestHeader('Idempotency-Key', key);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress?.(event.loaded / event.total);
    });
    xhr.addEventListener('load', () => resolve(new Response(xhr.responseText || null, {
      status: xhr.status, headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') || '' },
    })));
    xhr.addEventListener('error', () => reject(new ApiError('Cannot reach the service. Check your connection and try again.', { code: 'network' })));
    xhr.send(file);
  });
  busy(+1);
  try {
    const stored = session.current();
    onProgress?.(0);
    let response = await send(stored);
    if (response.status === 401 && stored) {
      const now = session.current();
      const fresh = now && now.access_token !== stored.access_token ? true : await refreshTokens();
      if (!fresh) throw new ApiError('Your session has ended. Please log in again.', { status: 401, code: 'session_ended' });
      onProgress?.(0);
      response = await send(session.current());
    }
    if (!response.ok) {
      const error = await problemOf(response);
      for (const fn of problemListeners) fn(error);
      throw error;
    }
    return readBody(response);
  } finally {
    busy(-1);
  }
}

/** A random key for Idempotency-Key, so a retried create never makes two notes. */
export function newIdempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
