// The page a mailed link opens (/t/{tenant}/links/verify or /reset#t=<token>). Loading it
// changes nothing: a mail scanner that opens every link only gets this page. The person's tap
// (or their new password) posts the token, which is read from the fragment and never sent
// to a server in a URL.
const page = document.location.pathname.split("/").filter(Boolean);
const kind = page[3];
const token = new URLSearchParams(document.location.hash.slice(1)).get("t");
const $ = (id) => document.getElementById(id);

function show(state, text) {
  document.body.dataset.state = state;
  $("link-text").textContent = text;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json().catch(() => ({}));
  return { ok: response.ok, json };
}

function failed(json) {
  if (json.code === "code_expired") return "This link was used already, replaced by a newer one, or is too old. Ask the app for a new one.";
  if (json.code === "invalid_code") return "This link is not valid. Open the newest message, or ask the app for a new one.";
  return json.detail || "Something went wrong. Try again.";
}

if (!token || !["verify", "reset"].includes(kind)) {
  show("invalid", "This link is incomplete. Open it from the message again, in full.");
} else if (kind === "verify") {
  $("link-title").textContent = "Verify your email";
  show("ready", "Tap the button to confirm that this address is yours.");
  $("verify-button").hidden = false;
  $("verify-button").addEventListener("click", async () => {
    $("verify-button").disabled = true;
    const { ok, json } = await post("/v1/me/email/verify", { token });
    $("verify-button").hidden = ok;
    $("verify-button").disabled = false;
    show(ok ? "done" : "failed", ok ? `${json.email} is verified. You can close this page.` : failed(json));
  });
} else {
  $("link-title").textContent = "Set a new password";
  show("ready", "Choose a new password. Every device signed in to your account will be signed out.");
  $("reset-form").hidden = false;
  $("reset-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const { ok, json } = await post("/v1/auth/password/reset", { token, new_password: $("new-password").value });
    if (ok) $("reset-form").hidden = true;
    const problem = (json.errors || []).map((e) => e.message).join("; ");
    show(ok ? "done" : "failed", ok ? "Your password is set. Sign in with it in the app." : (problem ? `The password ${problem}.` : failed(json)));
  });
}
