// Password reset from the log-in form, and the banner that asks a signed-in user to verify
// their email (issue 35). Codes come by email; the links in those emails open links.html.

import * as api from './api.js';
import { $ } from './dom.js';

/**
 * The "Forgot your password?" form. `tenant()` names the app; `signedIn(tokens)` takes the
 * answer of a reset (the service signs the user in); `problem(error)` shows what went wrong.
 */
export function wireForgot({ tenant, signedIn, problem, showForm }) {
  $('#show-forgot').addEventListener('click', (event) => {
    event.preventDefault();
    $('#forgot-login').value = $('#login-username').value.trim();
    showForm('forgot');
  });
  $('#forgot-back').addEventListener('click', (event) => { event.preventDefault(); showForm('login'); });
  $('#forgot-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const login = $('#forgot-login').value.trim();
    const slug = tenant();
    if (!login || !slug) return;
    api.setTenant(slug);
    try {
      await api.post('/v1/auth/password/forgot', { login }, { auth: false });
      // The same answer whether or not the account exists: say so.
      $('#forgot-status').textContent = 'If that account has a verified email, a code is on its way. It works for 15 minutes.';
      $('#reset-fields').hidden = false;
      $('#reset-code').focus();
    } catch (error) {
      problem(error);
    }
  });
  $('#reset-submit').addEventListener('click', async () => {
    const body = {
      login: $('#forgot-login').value.trim(),
      code: $('#reset-code').value.trim(),
      new_password: $('#reset-password').value,
    };
    try {
      const tokens = await api.post('/v1/auth/password/reset', body, { auth: false });
      $('#reset-password').value = '';
      $('#reset-code').value = '';
      $('#reset-fields').hidden = true;
      $('#forgot-status').textContent = '';
      signedIn(tokens);
    } catch (error) {
      problem(error);
    }
  });
}

/** Shows the verification banner when the account's email (or a new one) waits for its code. */
export function checkVerification(me, { problem, refreshed }) {
  const banner = $('#verify-banner');
  const waiting = me.pending_email ?? (me.email && !me.email_verified ? me.email : null);
  banner.hidden = !waiting;
  if (!waiting) return;
  $('#verify-text').textContent = me.pending_email
    ? `Confirm your new email, ${waiting}: enter the code we sent there.`
    : `Verify your email, ${waiting}: enter the code we sent, or ask for a new one.`;
  $('#verify-send').onclick = async () => {
    try {
      const sent = await api.post('/v1/me/email/verification');
      $('#verify-text').textContent = `A new code went to ${sent.email}.`;
      $('#verify-code').focus();
    } catch (error) {
      problem(error);
    }
  };
  $('#verify-submit').onclick = async () => {
    try {
      await api.post('/v1/me/email/verify', { code: $('#verify-code').value.trim() });
      $('#verify-code').value = '';
      banner.hidden = true;
      refreshed?.();
    } catch (error) {
      problem(error);
    }
  };
}
