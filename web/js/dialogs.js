// Modal dialogs: native <dialog> (Escape closes it, focus stays inside),
// with focus handed back to whatever opened it.

const openers = new WeakMap();

export function open(dialog, focusTarget) {
  openers.set(dialog, document.activeElement);
  setError(dialog, '');
  if (!dialog.open) dialog.showModal();
  (focusTarget ?? dialog.querySelector('input, textarea, select, button'))?.focus();
}

export function close(dialog) {
  if (dialog.open) dialog.close();
}

/** Shows a problem inside the dialog, which sits above the page's own alert. */
export function setError(dialog, message) {
  const box = dialog.querySelector('.dialog-error');
  if (!box) return;
  box.textContent = message || '';
  box.hidden = !message;
}

/**
 * Runs fn on every close (Escape, Cancel, saved). Focus goes back to what
 * opened the dialog, or to fallback() when that is gone (a deleted note's popup).
 */
export function onClose(dialog, fn, fallback = () => null) {
  dialog.addEventListener('close', () => {
    const opener = openers.get(dialog);
    openers.delete(dialog);
    fn();
    // An opener hidden meanwhile (in a profile closed by the report it opened, on a place
    // panel closed by its report) cannot take the focus back.
    const usable = opener && opener.isConnected && opener.getClientRects().length > 0;
    const target = usable ? opener : fallback();
    if (target && typeof target.focus === 'function') target.focus();
  });
}

/** Disables the dialog's buttons while a request runs, so a double click saves once. */
export function setBusy(dialog, busy) {
  for (const button of dialog.querySelectorAll('button')) button.disabled = busy;
  dialog.setAttribute('aria-busy', String(busy));
}
