// Sign in with Apple, Google or an OpenID Connect provider, without their scripts:
// this tab goes to the provider's own page (OpenID Connect's implicit flow) and comes
// back with the ID token in the URL's fragment, which browsers never send to a server,
// so it is in no log. The app then exchanges it at POST /v1/auth/id-token.
//
// `state` ties the return to the sign-in this tab started (no other site can make the
// app sign in to an account of its choosing); the nonce ties the token to it too.

const PENDING = 'lr.providerSignIn';

function randomValue() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Leaves for the provider's page; the promise never settles, the page unloads. */
export async function startProviderSignIn(provider) {
  const state = randomValue();
  const nonce = randomValue();
  sessionStorage.setItem(PENDING, JSON.stringify({ provider: provider.provider, state, nonce }));
  const url = new URL(provider.authorize_url);
  url.searchParams.set('client_id', provider.client_id);
  url.searchParams.set('redirect_uri', location.origin + location.pathname);
  url.searchParams.set('response_type', provider.response_type);
  url.searchParams.set('response_mode', 'fragment');
  if (provider.scope) url.searchParams.set('scope', provider.scope);
  url.searchParams.set('state', state);
  // Apple and Google put what they are sent in the token; the service compares the
  // nonce it is given with the token's as the provider's format says (hashed or raw).
  url.searchParams.set('nonce', provider.nonce === 'hashed' ? await sha256Hex(nonce) : nonce);
  location.assign(url.toString());
  return new Promise(() => {});
}

/**
 * The provider's answer when this page load is the return from one, else null. The
 * fragment is removed from the address (and so from history) at once either way.
 * Throws an Error with a readable message when the provider refused or the answer is
 * not the one this tab asked for.
 */
export function takeProviderReturn() {
  if (!location.hash.includes('id_token=') && !location.hash.includes('error=')) return null;
  const answer = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname + location.search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  // The state first: words from a link this tab did not start are not shown as the app's.
  if (!pending || answer.get('state') !== pending.state) {
    throw new Error('That sign-in did not start here; please try again.');
  }
  if (answer.get('error')) {
    throw new Error(`Sign-in was not completed: ${answer.get('error_description') || answer.get('error')}`);
  }
  const result = { provider: pending.provider, id_token: answer.get('id_token'), nonce: pending.nonce };
  if (answer.get('code')) result.authorization_code = answer.get('code');
  return result;
}
