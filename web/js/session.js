// The signed-in session: tokens, user and tenant in localStorage, so a reload
// (or a second tab) stays signed in. Read from storage on every use: another
// tab may have refreshed the tokens meanwhile, and its refresh token is the
// only one still good.

const KEY = 'lr.session';

export function current() {
  try {
    const value = JSON.parse(localStorage.getItem(KEY));
    return value && value.access_token && value.refresh_token ? value : null;
  } catch {
    return null;
  }
}

/** Keep a token answer ({user, access_token, refresh_token}) for a tenant. */
export function save(tokens, tenant) {
  const value = {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    user: tokens.user ?? current()?.user ?? null,
    tenant: tenant ?? current()?.tenant ?? null,
  };
  try { localStorage.setItem(KEY, JSON.stringify(value)); } catch { /* this visit still works */ }
  return value;
}

export function updateUser(user) {
  const value = current();
  if (!value) return;
  value.user = { ...value.user, ...user };
  try { localStorage.setItem(KEY, JSON.stringify(value)); } catch { /* cosmetic */ }
}

export function clear() {
  try { localStorage.removeItem(KEY); } catch { /* nothing to keep */ }
}

/** Calls fn(session or null) when another tab signs in, refreshes or signs out. */
export function onOtherTabChange(fn) {
  window.addEventListener('storage', (event) => {
    if (event.key === KEY || event.key === null) fn(current());
  });
}
