// Preferences that outlive a visit. localStorage can throw (private modes,
// quota), and a lost preference must never break the app.

const DISTANCE_KEY = 'lr.distance';
const VIEW_KEY = 'lr.view';
const TENANT_KEY = 'lr.tenant';
export const DISTANCES = ['1000', '10000', '100000', 'global'];
const DEFAULT_DISTANCE = 'global';

function read(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}
function write(key, value) {
  try {
    if (value == null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch { /* keeping the preference is a nicety */ }
}

export function distance() {
  const value = read(DISTANCE_KEY);
  return DISTANCES.includes(value) ? value : DEFAULT_DISTANCE;
}
export function setDistance(value) {
  if (DISTANCES.includes(value)) write(DISTANCE_KEY, value);
}
/** The radius_m for the distance preference, or null for no limit. */
export function radiusMetres(value = distance()) {
  return value === 'global' ? null : Number(value);
}

/** The last map view {lat, lng, zoom}, so a reload opens where one left off. */
export function lastView() {
  try {
    const view = JSON.parse(read(VIEW_KEY));
    if (view && [view.lat, view.lng, view.zoom].every(Number.isFinite)) return view;
  } catch { /* ignore a damaged value */ }
  return null;
}
export function setLastView(view) {
  write(VIEW_KEY, view == null ? null : JSON.stringify(view));
}

/** The app slug last typed on the sign-in form, when the deployment does not fix one. */
export function lastTenant() {
  return read(TENANT_KEY) || '';
}
export function setLastTenant(slug) {
  write(TENANT_KEY, slug || null);
}
