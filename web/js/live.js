// Live changes over Server-Sent Events. EventSource cannot send headers, so
// each connection starts with a single-use ticket; EventSource's own
// reconnect would present a spent ticket, so on any error the stream is
// closed and reopened here with a new ticket and the last event id seen.

import * as api from './api.js';

const EVENTS = ['note.created', 'note.updated', 'note.deleted', 'place.created', 'place.updated', 'place.deleted', 'reset'];
const MIN_DELAY = 1000;
const MAX_DELAY = 30000;

let source = null;
let handler = null;
let lastId = null;
let delay = MIN_DELAY;
let timer = null;
let running = false;
let generation = 0;

function setState(state) {
  document.body.dataset.stream = state;
}

/** start(onEvent(type, data)): keeps a stream open until stop(). */
export function start(onEvent) {
  stop();
  handler = onEvent;
  running = true;
  lastId = null;
  delay = MIN_DELAY;
  connect();
}

export function stop() {
  running = false;
  generation += 1;
  clearTimeout(timer);
  timer = null;
  source?.close();
  source = null;
  setState('closed');
}

async function connect() {
  const mine = ++generation;
  let ticket;
  try {
    ({ ticket } = await api.post('/v1/events/tickets'));
  } catch (error) {
    if (mine !== generation) return;
    // Signed out meanwhile: nothing to reconnect for.
    if (error.status === 401) { stop(); return; }
    retryLater(error.retryAfter);
    return;
  }
  if (mine !== generation || !running) return;
  const url = `/v1/events?ticket=${encodeURIComponent(ticket)}${lastId ? `&last_event_id=${encodeURIComponent(lastId)}` : ''}`;
  const stream = new EventSource(url);
  source = stream;
  stream.addEventListener('open', () => {
    if (source !== stream) return;
    delay = MIN_DELAY;
    setState('open');
    // Opened without a position to resume from (the first stream, or no event arrived
    // before a reconnect): whatever changed before this moment was never sent, so what
    // is shown is fetched again now that nothing after it can be missed.
    if (!lastId) handler?.('resync', {});
  });
  stream.addEventListener('error', () => {
    if (source !== stream) return;
    stream.close();
    source = null;
    setState('closed');
    retryLater();
  });
  for (const type of EVENTS) {
    stream.addEventListener(type, (event) => {
      if (source !== stream) return;
      if (event.lastEventId) lastId = event.lastEventId;
      let data = null;
      try { data = event.data ? JSON.parse(event.data) : {}; } catch { return; }
      handler?.(type, data);
    });
  }
}

function retryLater(seconds) {
  if (!running) return;
  clearTimeout(timer);
  const wait = seconds ? Math.min(MAX_DELAY, seconds * 1000) : delay;
  // A little jitter keeps many tabs from reconnecting in step after an outage.
  timer = setTimeout(connect, wait + Math.random() * 250);
  delay = Math.min(MAX_DELAY, delay * 2);
}

/** Reconnect at once (the network came back, the tab became visible). */
export function nudge() {
  if (!running || source) return;
  delay = MIN_DELAY;
  clearTimeout(timer);
  connect();
}
