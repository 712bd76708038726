// Where I am (navigator.geolocation), and the geometry the app needs. The
// pure helpers at the top run in node too.

const EARTH_RADIUS_M = 6371008.8;
const rad = (deg) => (deg * Math.PI) / 180;

/** Great-circle distance in metres between {lat, lng} points (close to the service's spheroid). */
export function distanceMetres(a, b) {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Any longitude into [-180, 180). */
export function wrapLng(lng) {
  return ((((lng + 180) % 360) + 360) % 360) - 180;
}

const clampLat = (lat) => Math.max(-85, Math.min(85, lat));
const fixed = (n) => Number(n.toFixed(6));

/**
 * The API's bbox "min_lng,min_lat,max_lng,max_lat" for a viewport that may
 * have scrolled around the world: longitudes wrapped into -180..180 (a view
 * across the antimeridian gives min_lng > max_lng), a view wider than the
 * world the whole of it, latitudes within ±85.
 */
export function bboxParam(west, south, east, north) {
  let minLng;
  let maxLng;
  if (east - west >= 360) {
    minLng = -180;
    maxLng = 180;
  } else {
    minLng = wrapLng(west);
    maxLng = wrapLng(east);
    // An east edge exactly on the antimeridian wraps to -180; it means 180 here.
    if (maxLng === -180 && east > west) maxLng = 180;
  }
  return [fixed(minLng), fixed(clampLat(south)), fixed(maxLng), fixed(clampLat(north))].join(',');
}

/** "lat,lng" for the API's near parameter. */
export const nearParam = ({ lat, lng }) => `${fixed(lat)},${fixed(wrapLng(lng))}`;

/**
 * Watches the device's position. onFix({lat, lng, accuracy}) on every fix,
 * onError(message) when there is none to be had. Returns stop().
 */
export function watchPosition(onFix, onError) {
  if (!('geolocation' in navigator)) {
    onError('This browser cannot tell where you are.');
    return () => {};
  }
  const id = navigator.geolocation.watchPosition(
    (position) => onFix({
      lat: position.coords.latitude,
      lng: position.coords.longitude,
      accuracy: position.coords.accuracy,
    }),
    (error) => onError(error.code === error.PERMISSION_DENIED
      ? 'Location is off for this site.'
      : 'Your position is not available right now.'),
    { enableHighAccuracy: true, maximumAge: 10000, timeout: 30000 },
  );
  return () => navigator.geolocation.clearWatch(id);
}
