"""What the service does for the web app, checked over HTTP and in a browser: the static
files (Content-Security-Policy, no inline script, ETag), /app-config.json, stream
tickets, and per-tenant CORS."""

import html.parser
import http.client as httpclient
import json
import os
import re
import socket
import tempfile
import threading
import time
import urllib.parse
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from support import (
    BASE_URL, TENANT, BrowserTestCase, User, console_problems, http, js, run_admin, wait_until,
)

TICKET_TTL = int(os.environ.get("LR_WEB_TICKET_TTL", "30"))


class ScriptFinder(html.parser.HTMLParser):
    """Collects <script> tags (with or without src), their inline text, and on* attributes."""

    def __init__(self):
        super().__init__()
        self.scripts, self.handlers, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.handlers += [f"{tag} {name}" for name in attributes if name.lower().startswith("on")]
        if tag == "script":
            self.scripts.append({"src": attributes.get("src"), "text": ""})
            self._in_script = True

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1]["text"] += data


def csp_directives(header):
    directives = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def get(path, **headers):
    return http("GET", path, headers=headers, tenant=None)


class StaticFileTests(BrowserTestCase):
    def test_index_has_a_csp_without_inline_script_and_uses_none(self):
        response = get("/")
        self.assertEqual(response.status, 200)
        self.assertTrue(response.headers.get("Content-Type", "").startswith("text/html"))
        header = response.headers.get("Content-Security-Policy")
        self.assertTrue(header, "GET / has a Content-Security-Policy")
        directives = csp_directives(header)
        scripts = directives.get("script-src", directives.get("default-src"))
        self.assertIsNotNone(scripts, f"the policy says where scripts may come from: {header}")
        self.assertNotIn("'unsafe-inline'", scripts)
        self.assertNotIn("'unsafe-eval'", scripts)
        self.assertNotIn("*", scripts)

        finder = ScriptFinder()
        finder.feed(response.raw.decode())
        self.assertTrue(finder.scripts, "index.html loads a script")
        for script in finder.scripts:
            self.assertTrue(script["src"], "every <script> has a src")
            self.assertEqual(script["text"].strip(), "", "no inline script")
        self.assertEqual(finder.handlers, [], "no inline event handlers")

    def test_the_browser_enforces_the_policy_and_the_tests_notice(self):
        driver = self.open_browser()
        js(driver, "const s = document.createElement('script'); s.textContent = 'window.inlineRan = true';"
                   "document.head.append(s)")
        reported = []  # reading the browser's log empties it: keep what each read returned

        def refusal_reported(d):
            reported.extend(console_problems(d))
            return any("inline script" in problem for problem in reported)
        wait_until(driver, refusal_reported, "the injected inline script was not refused (or not reported)")
        self.assertIsNone(js(driver, "return window.inlineRan ?? null"), "the inline script ran")

    def test_static_files_have_an_etag_and_answer_304_when_unchanged(self):
        main_script = ScriptFinder()
        main_script.feed(get("/").raw.decode())
        paths = ["/", main_script.scripts[0]["src"], "/vendor/leaflet/leaflet.js"]
        for path in paths:
            with self.subTest(path=path):
                first = get(path)
                self.assertEqual(first.status, 200)
                etag = first.headers.get("ETag")
                self.assertTrue(etag, f"{path} has an ETag")
                again = get(path, **{"If-None-Match": etag})
                self.assertEqual(again.status, 304, f"{path} with If-None-Match: {etag}")
                self.assertEqual(again.raw, b"")
                changed = get(path, **{"If-None-Match": '"not-the-etag"'})
                self.assertEqual(changed.status, 200)

    def test_app_config_and_leaflet(self):
        config = get("/app-config.json")
        self.assertEqual(config.status, 200)
        self.assertEqual(config.json["tenant"], TENANT)
        self.assertFalse(config.json["tiles"]["url"], "the tests run without map tiles")
        self.assertIn("attribution", config.json["tiles"])
        leaflet = get("/vendor/leaflet/leaflet.js")
        self.assertEqual(leaflet.status, 200)
        self.assertIn("javascript", leaflet.headers.get("Content-Type", ""))
        self.assertEqual(get("/vendor/leaflet/leaflet.css").status, 200)


def open_stream(ticket, timeout=10):
    """GET /v1/events?ticket=… with no headers at all, as EventSource does; returns (status,
    content type, body of an error) and closes the stream."""
    url = urllib.parse.urlsplit(BASE_URL)
    connection = httpclient.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        connection.request("GET", "/v1/events?" + urllib.parse.urlencode({"ticket": ticket}))
        response = connection.getresponse()
        body = response.read() if response.status != 200 else b""
        return response.status, response.headers.get("Content-Type", ""), body
    finally:
        connection.close()


class TicketTests(BrowserTestCase):
    def setUp(self):
        self.user = User.sign_up("tickets")

    def new_ticket(self):
        response = http("POST", "/v1/events/tickets", token=self.user.token, headers={"X-Tenant": TENANT})
        self.assertEqual(response.status, 201, response.raw)
        return response.json

    def test_a_ticket_opens_the_stream_once(self):
        ticket = self.new_ticket()
        self.assertTrue(ticket["ticket"].startswith("lr_st_"))
        self.assertEqual(ticket["expires_in"], TICKET_TTL)

        status, content_type, _ = open_stream(ticket["ticket"])
        self.assertEqual(status, 200)
        self.assertTrue(content_type.startswith("text/event-stream"))

        status, content_type, body = open_stream(ticket["ticket"])
        self.assertEqual(status, 401, "a ticket works once")
        self.assertTrue(content_type.startswith("application/problem+json"))
        self.assertEqual(json.loads(body)["status"], 401)

    def test_an_unknown_ticket_or_none_is_refused(self):
        self.assertEqual(open_stream("lr_st_" + "A" * 43)[0], 401)
        self.assertEqual(http("POST", "/v1/events/tickets", tenant=TENANT).status, 401,
                         "a ticket needs an access token")

    def test_a_ticket_expires(self):
        if TICKET_TTL > 5:
            self.skipTest(f"tickets last {TICKET_TTL} s here; the Swift tests check expiry")
        ticket = self.new_ticket()
        issued = time.monotonic()
        # The one wait that stands for time itself passing: the ticket's whole life.
        time.sleep(max(0.0, ticket["expires_in"] + 1.2 - (time.monotonic() - issued)))
        self.assertEqual(open_stream(ticket["ticket"])[0], 401, "an expired ticket is refused")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CORS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>pending</title><script src="probe.js" defer></script></head>
<body><p id="result">pending</p></body></html>
"""

# Signs in as a guest with X-Tenant, then reads /v1/me with the token: a preflighted
# request each (custom headers). The outcome goes to the title and #result.
CORS_SCRIPT = """
const params = new URLSearchParams(location.search);
const api = params.get('api');
const tenant = params.get('tenant');
function done(text) { document.title = text; document.getElementById('result').textContent = text; }
(async () => {
  try {
    const guest = await fetch(api + '/v1/auth/guest', {method: 'POST', headers: {'X-Tenant': tenant}});
    const tokens = await guest.json();
    const me = await fetch(api + '/v1/me', {headers: {'Authorization': 'Bearer ' + tokens.access_token}});
    const body = await me.json();
    done('ok ' + me.status + ' ' + body.username);
  } catch (error) {
    done('error ' + error.name);
  }
})();
"""


class CorsTests(BrowserTestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        with open(os.path.join(self.folder.name, "index.html"), "w") as f:
            f.write(CORS_PAGE)
        with open(os.path.join(self.folder.name, "probe.js"), "w") as f:
            f.write(CORS_SCRIPT)
        port = free_port()
        handler = partial(QuietHandler, directory=self.folder.name)
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.origin = f"http://127.0.0.1:{port}"
        self.page = f"{self.origin}/index.html?" + urllib.parse.urlencode({"api": BASE_URL, "tenant": TENANT})
        self.addCleanup(run_admin, "tenant", "set", TENANT, "allowed_origins", "")

    def preflight(self, origin, path="/v1/auth/guest", method="POST", headers="x-tenant"):
        return http("OPTIONS", path, tenant=None, headers={
            "Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers})

    def page_result(self, driver):
        return wait_until(driver, lambda d: d.title if d.title != "pending" else None,
                          "the page's script did not finish")

    def test_only_allowed_origins_reach_the_api_from_a_browser(self):
        refused = self.preflight(self.origin)
        self.assertEqual(refused.status, 403, "a preflight from an origin not allowed")
        self.assertIsNone(refused.headers.get("Access-Control-Allow-Origin"))
        plain = http("POST", "/v1/auth/guest", headers={"Origin": self.origin})
        self.assertIsNone(plain.headers.get("Access-Control-Allow-Origin"))

        driver = self.open_browser(path=None, allowed_console=r"CORS policy|Failed to load resource|net::ERR_FAILED")
        driver.get(self.page)
        self.assertEqual(self.page_result(driver), "error TypeError", "the browser refuses the answer")

        port = urllib.parse.urlsplit(self.origin).port
        run_admin("tenant", "set", TENANT, "allowed_origins", f"{self.origin},http://localhost:{port}")
        allowed = wait_until(driver, lambda d: (lambda r: r if r.status in (200, 204) else None)(self.preflight(self.origin)),
                             "the preflight is still refused after allowing the origin")
        self.assertEqual(allowed.headers.get("Access-Control-Allow-Origin"), self.origin)
        allowed_headers = allowed.headers.get("Access-Control-Allow-Headers", "").lower()
        self.assertIn("x-tenant", allowed_headers)
        me_preflight = self.preflight(self.origin, path="/v1/me", method="GET", headers="authorization")
        self.assertIn(me_preflight.status, (200, 204))
        self.assertIn("authorization", me_preflight.headers.get("Access-Control-Allow-Headers", "").lower())
        self.assertEqual(http("POST", "/v1/auth/guest", headers={"Origin": self.origin})
                         .headers.get("Access-Control-Allow-Origin"), self.origin)
        self.assertEqual(self.preflight(f"http://localhost:{port}").headers.get("Access-Control-Allow-Origin"),
                         f"http://localhost:{port}")

        other = "http://127.0.0.1:1"
        self.assertEqual(self.preflight(other).status, 403, "other origins stay refused")
        self.assertIsNone(http("POST", "/v1/auth/guest", headers={"Origin": other}).headers.get("Access-Control-Allow-Origin"))

        driver.get(self.page)
        result = self.page_result(driver)
        self.assertTrue(re.fullmatch(r"ok 200 guest-\S+", result), f"the allowed page reads the API: {result}")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
