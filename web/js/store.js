// The notes the app knows about, by id, and who wants to hear of changes.
// The map, the list and the place view all draw from it, so a note edited
// here or by someone else (live) changes everywhere at once.

const notes = new Map();
const events = new EventTarget();

export function get(id) {
  return notes.get(id) ?? null;
}

/**
 * Keep the newest version of a note. origin says where it came from:
 * 'fetch' (a query's answer), 'live' (the event stream) or 'local' (this app
 * saved it); listeners get {note, previous, origin}, only when something changed.
 */
export function put(note, origin = 'fetch') {
  const previous = notes.get(note.id) ?? null;
  // distance_m belongs to the query that returned it, not to the note.
  const { distance_m: _ignored, ...plain } = note;
  if (previous) {
    if (previous.updated_at && plain.updated_at && previous.updated_at > plain.updated_at) return previous;
    if (JSON.stringify(previous) === JSON.stringify(plain)) return previous;
  }
  notes.set(note.id, plain);
  events.dispatchEvent(new CustomEvent('put', { detail: { note: plain, previous, origin } }));
  return plain;
}

export function putAll(list, origin = 'fetch') {
  for (const note of list) put(note, origin);
}

export function remove(id, origin = 'local') {
  const previous = notes.get(id) ?? null;
  notes.delete(id);
  events.dispatchEvent(new CustomEvent('remove', { detail: { id, previous, origin } }));
}

export function clear() {
  notes.clear();
  events.dispatchEvent(new CustomEvent('clear'));
}

/** on('put' | 'remove' | 'clear', fn(detail)) */
export function on(type, fn) {
  events.addEventListener(type, (event) => fn(event.detail ?? {}));
}
