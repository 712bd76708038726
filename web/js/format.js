// Human hints for distances and times. Pure: node can check them.

/** < 10 m "here", < 1 km "120 m" (10 m steps), < 10 km "3.4 km", else "345 km". */
export function distanceHint(metres) {
  if (metres == null || !Number.isFinite(metres) || metres < 0) return '';
  if (metres < 10) return 'here';
  if (metres < 1000) return `${Math.round(metres / 10) * 10} m`;
  if (metres < 10000) return `${(metres / 1000).toFixed(1)} km`;
  return `${Math.round(metres / 1000)} km`;
}

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then a date. */
export function timeAgo(iso, now = Date.now()) {
  const then = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(then)) return '';
  // A clock a little ahead of the server's must not say "in 2 min".
  const elapsed = Math.max(0, now - then);
  if (elapsed < 45 * 1000) return 'just now';
  if (elapsed < HOUR) return `${Math.max(1, Math.round(elapsed / MINUTE))} min ago`;
  if (elapsed < DAY) return `${Math.round(elapsed / HOUR)} h ago`;
  const days = Math.floor(elapsed / DAY);
  if (days === 1) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  return new Date(then).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
}

/** "3 h 20 min left" until `due` (ISO or ms), or "overdue by 2 h 5 min" once past it. */
export function timeLeft(due, now = Date.now()) {
  const at = typeof due === 'number' ? due : Date.parse(due);
  if (!Number.isFinite(at)) return { text: '', overdue: false };
  const overdue = at < now;
  const span = duration(Math.abs(at - now));
  return { text: overdue ? `overdue by ${span}` : `${span} left`, overdue };
}

/** "2 d 3 h", "5 h 12 min", "40 min", "less than a minute": whole units, rounded down. */
export function duration(ms) {
  const minutes = Math.floor(ms / MINUTE);
  if (minutes < 1) return 'less than a minute';
  const days = Math.floor(minutes / (24 * 60));
  const hours = Math.floor(minutes / 60) % 24;
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes % 60} min`;
  return `${minutes} min`;
}

/** The full date and time, for a title attribute behind the short hint. */
export function fullTime(iso) {
  const then = Date.parse(iso);
  if (!Number.isFinite(then)) return '';
  return new Date(then).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "-33.86880, 151.20930": for telling people where a dialog will save. */
export function coords({ lat, lng }) {
  return `${lat.toFixed(5)}, ${lng.toFixed(5)}`;
}

/** At most `limit` characters (code points, as the service counts them), with "…" when cut. */
export function truncate(text, limit) {
  const characters = [...text];
  return characters.length > limit ? `${characters.slice(0, limit - 1).join('')}…` : text;
}
