"""Shared helpers of the web app's browser tests.

- `Api`: the service's HTTP API through urllib, so each test makes its own users,
  notes and places without going through the page it is testing.
- `BrowserTestCase`: opens headless Chromium (Debian's, through chromedriver) with
  geolocation granted and overridden, closes every browser it opened, and fails
  the test on uncaught JavaScript errors and Content-Security-Policy violations.
- Waits are WebDriverWait on DOM state; `assert_stays` is the one bounded wait,
  used only to show that something does NOT happen.

Settings come from the environment that scripts/test-web.sh sets:
LR_WEB_BASE_URL, LR_WEB_TENANT, LR_WEB_BIN, LR_WEB_REPORT_DIR.
"""

import errno
import json
import math
import os
import random
import re
import secrets
import subprocess
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a browser.

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import JavascriptException, StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

BASE_URL = os.environ.get("LR_WEB_BASE_URL", "http://127.0.0.1:8080").rstrip("/")
TENANT = os.environ.get("LR_WEB_TENANT", "web")
BIN = os.environ.get("LR_WEB_BIN", "")
REPORT_DIR = os.environ.get("LR_WEB_REPORT_DIR", os.path.join(os.getcwd(), ".build", "web-report"))
PASSWORD = "Harbour-lights-at-dusk-42"

PHONE = (390, 844)
DESKTOP = (1280, 800)

# Sydney, beside the demo's default places (sql/demo).
SYDNEY = (-33.8587, 151.2140)

# Deadlines, not measurements: every wait ends as soon as the page shows what it waits for,
# so only a failing test waits them out, and a loaded 2-core machine (Chromium, the service
# and PostgreSQL on the same cores) needs far more than an idle one.
WAIT = 60  # seconds for anything the page does by itself
# Seconds for a change to reach another user's page. A page that is not live would show
# it only once reloaded (the list re-renders itself each 60 s, the tests never reload it).
LIVE_WAIT = 20


# ---------------------------------------------------------------- names and places

def unique_name(prefix):
    """A username (3-32 of A-Z a-z 0-9 . _ -) no other test uses."""
    return f"{prefix}-{secrets.token_hex(4)}"[:32]


def metres_per_degree_lat(lat):
    phi = math.radians(lat)
    return 111132.92 - 559.82 * math.cos(2 * phi) + 1.175 * math.cos(4 * phi)


def metres_per_degree_lng(lat):
    phi = math.radians(lat)
    return 111412.84 * math.cos(phi) - 93.5 * math.cos(3 * phi)


def offset(position, north_m=0.0, east_m=0.0):
    """The point north_m metres north and east_m metres east of position (lat, lng),
    on the spheroid; along a meridian (east_m=0) accurate to centimetres over hundreds of km."""
    lat, lng = position
    new_lat = lat
    if north_m:
        # Integrate the meridian's metres per degree in small steps.
        steps = max(1, int(abs(north_m) // 1000) + 1)
        step = north_m / steps
        for _ in range(steps):
            mid = new_lat + step / metres_per_degree_lat(new_lat) / 2
            new_lat += step / metres_per_degree_lat(mid)
    new_lng = lng + east_m / metres_per_degree_lng(new_lat)
    return (new_lat, new_lng)


# Spots on a grid 18 degrees of latitude and 20 of longitude apart (at least 1,500 km), each
# handed out once per run: a test's notes up to 500 km away never meet another test's.
_SPOTS = [(lat, lng) for lat in (-40, -22, -4, 14, 32) for lng in range(-170, 180, 20)]
_random = random.Random()
_random.shuffle(_SPOTS)


def isolated_spot():
    """A place (lat, lng) far from every other test's notes, and from Sydney's."""
    lat, lng = _SPOTS.pop()
    return (round(lat + _random.uniform(-0.5, 0.5), 6), round(lng + _random.uniform(-0.5, 0.5), 6))


def ground_distance(a, b):
    """Metres between two (lat, lng), locally flat: for the short distances tests compare."""
    mid = (a[0] + b[0]) / 2
    dy = (a[0] - b[0]) * metres_per_degree_lat(mid)
    dx = (a[1] - b[1]) * metres_per_degree_lng(mid)
    return math.hypot(dx, dy)


# ---------------------------------------------------------------- the API through urllib

class ApiError(Exception):
    def __init__(self, status, body, headers):
        super().__init__(f"HTTP {status}: {body}")
        self.status, self.body, self.headers = status, body, headers


class Response:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw

    @property
    def json(self):
        return json.loads(self.raw) if self.raw else None


def http(method, path, body=None, headers=None, token=None, tenant=TENANT, timeout=10):
    """One request; returns Response whatever the status (no exception on 4xx/5xx)."""
    url = path if path.startswith("http") else BASE_URL + path
    data = None
    all_headers = {"Accept": "application/json"}
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    elif tenant:
        all_headers["X-Tenant"] = tenant
    all_headers.update(headers or {})
    request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Response(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, error.headers, error.read())


def ok(response, *statuses):
    if response.status not in statuses:
        raise ApiError(response.status, response.raw.decode(errors="replace"), response.headers)
    return response.json


class User:
    """A signed-up user with an access token, and the API calls tests make as them."""

    def __init__(self, username, password, tokens):
        self.username, self.password = username, password
        self.token = tokens["access_token"]
        self.id = tokens["user"]["id"]

    @classmethod
    def sign_up(cls, prefix="user", password=PASSWORD, exact=False):
        """A new user named prefix-<random>, or just prefix with exact=True while it is free."""
        if exact:
            response = http("POST", "/v1/auth/signup", {"username": prefix, "password": password})
            if response.status == 201:
                return cls(prefix, password, response.json)
        username = unique_name(prefix)
        tokens = ok(http("POST", "/v1/auth/signup", {"username": username, "password": password}), 201)
        return cls(username, password, tokens)

    def create_note(self, body, position, visibility="public", place_id=None):
        payload = {"body": body, "lat": position[0], "lng": position[1], "visibility": visibility}
        if place_id is not None:
            payload["place_id"] = place_id
        return ok(http("POST", "/v1/notes", payload, token=self.token), 201)

    def update_note(self, note_id, **fields):
        return ok(http("PATCH", f"/v1/notes/{note_id}", fields, token=self.token), 200)

    def delete_note(self, note_id):
        ok(http("DELETE", f"/v1/notes/{note_id}", token=self.token), 204)

    def get_note(self, note_id):
        response = http("GET", f"/v1/notes/{note_id}", token=self.token)
        return response.json if response.status == 200 else None

    def notes(self, **query):
        return ok(http("GET", "/v1/notes?" + urllib.parse.urlencode(query), token=self.token), 200)["items"]

    def create_place(self, name, position):
        return ok(http("POST", "/v1/places", {"name": name, "lat": position[0], "lng": position[1]}, token=self.token), 201)

    def places(self, **query):
        return ok(http("GET", "/v1/places?" + urllib.parse.urlencode(query), token=self.token), 200)["items"]

    def get_place(self, place_id):
        response = http("GET", f"/v1/places/{place_id}", token=self.token)
        return response.json if response.status == 200 else None

    def me(self):
        return ok(http("GET", "/v1/me", token=self.token), 200)

    def report(self, target_type, target_id, reason="spam"):
        return ok(http("POST", "/v1/reports", {"target": {"type": target_type, "id": target_id}, "reason": reason},
                       token=self.token), 200, 201)

    def reports(self):
        return ok(http("GET", "/v1/me/reports", token=self.token), 200)["items"]

    def block(self, username):
        ok(http("PUT", f"/v1/me/blocks/{username}", token=self.token), 204)


def near(position):
    return f"{position[0]},{position[1]}"


def run_admin(*args):
    """Runs the service binary's operator command (e.g. tenant set …) on the test database."""
    if not BIN:
        raise unittest.SkipTest("LR_WEB_BIN is not set (run through scripts/test-web.sh)")
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return subprocess.run([BIN, *args], check=True, capture_output=True, text=True, timeout=60).stdout
        except OSError as error:
            # A build relinking the binary meanwhile (the running service keeps its own copy):
            # it can be run again once the linker has closed it.
            if error.errno != errno.ETXTBSY or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def set_tenant(test, setting, value, restore):
    """Changes a setting of the tests' tenant (tenant set) and restores it when the test ends,
    whatever happens, so later tests see the tenant as it was."""
    run_admin("tenant", "set", TENANT, setting, value)
    test.addCleanup(run_admin, "tenant", "set", TENANT, setting, restore)


def make_moderator(test, user):
    """Makes user a moderator of the tests' tenant (tenant moderator) until the test ends."""
    run_admin("tenant", "moderator", TENANT, user.username)
    test.addCleanup(run_admin, "tenant", "moderator", TENANT, user.username, "--revoke")


# ---------------------------------------------------------------- the browser

# Console messages that fail a test: uncaught exceptions and unhandled rejections
# (source "javascript"), and anything the Content-Security-Policy refused.
CSP_PATTERN = re.compile(r"Content Security Policy|Content-Security-Policy|Refused to (execute|load|apply|connect|evaluate)", re.I)


def new_driver(size=DESKTOP, position=None):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-search-engine-choice-screen", "--lang=en-GB",
                     # Nothing leaves this machine, whatever a page asks for.
                     "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
                     f"--window-size={size[0]},{size[1]}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        # --window-size sets the outer window; make the viewport itself the asked size.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600})
        driver.execute_cdp_cmd("Browser.grantPermissions", {"permissions": ["geolocation"], "origin": BASE_URL})
        if position is not None:
            set_position(driver, position)
    except Exception:
        driver.quit()
        raise
    return driver


def set_position(driver, position, accuracy=5):
    driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {
        "latitude": position[0], "longitude": position[1], "accuracy": accuracy})


def wait_until(driver, condition, message, timeout=WAIT):
    """Waits for condition(driver) to be truthy and returns it; on timeout fails with message."""
    def safe(d):
        try:
            return condition(d)
        except (StaleElementReferenceException, JavascriptException):
            return False
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(safe)
    except TimeoutException:
        raise AssertionError(f"after {timeout} s: {message}") from None


def assert_stays(driver, condition, message, seconds=0.8):
    """Checks that condition(driver) holds for `seconds` (something must NOT happen)."""
    deadline = time.monotonic() + seconds
    while True:
        if not condition(driver):
            raise AssertionError(message)
        if time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def body_data(driver, key):
    return js(driver, "return document.body.dataset[arguments[0]] ?? null", key)


def driver_local_storage(driver, key):
    return js(driver, "return localStorage.getItem(arguments[0])", key)


def exists(driver, selector):
    return js(driver, "return document.querySelector(arguments[0]) !== null", selector)


def displayed(driver, selector):
    elements = driver.find_elements(By.CSS_SELECTOR, selector)
    return bool(elements) and elements[0].is_displayed()


def text_of(driver, selector, root=None):
    """textContent (also of hidden elements, unlike WebElement.text), trimmed; None when absent."""
    return js(driver, "const e = (arguments[1] || document).querySelector(arguments[0]);"
                      "return e ? e.textContent.replace(/\\s+/g, ' ').trim() : null", selector, root)


def ids_of(driver, selector):
    """data-note-id (or data-place-id) of every element matching selector, in document order."""
    return js(driver, "return [...document.querySelectorAll(arguments[0])]"
                      ".map(e => e.dataset.noteId ?? e.dataset.placeId)", selector)


class BrowserTestCase(unittest.TestCase):
    """A test case that opens browsers and closes them all, whatever happens."""

    def open_browser(self, size=DESKTOP, position=None, path="/", allowed_console=None):
        """A new headless Chromium on the app (or `path`), ready (body[data-ready=true]).
        allowed_console: a regex of console errors this test expects (e.g. CORS refusals)."""
        driver = new_driver(size, position)
        self.addCleanup(self._close_browser, driver, allowed_console)
        if path is not None:
            driver.get(BASE_URL + path)
            if path == "/":
                wait_for_ready(driver)
        return driver

    def _close_browser(self, driver, allowed_console):
        try:
            problems = console_problems(driver, allowed_console) + off_machine_requests(driver)
            if (problems or self._has_failed()) and driver.session_id:
                self._save_screenshot(driver)
        finally:
            driver.quit()
        if problems:
            raise AssertionError("the page reported errors:\n" + "\n".join(problems))

    def _has_failed(self):
        # During cleanups unittest's outcome says success (each cleanup is a part of its
        # own); the result's lists say whether this test failed before.
        result = getattr(getattr(self, "_outcome", None), "result", None)
        return result is not None and any(test is self for test, _ in result.failures + result.errors)

    def _save_screenshot(self, driver):
        try:
            os.makedirs(REPORT_DIR, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", self.id())
            path = os.path.join(REPORT_DIR, f"{name}-{secrets.token_hex(2)}.png")
            driver.save_screenshot(path)
        except Exception:  # a failing screenshot must not hide the test's own failure
            pass


def off_machine_requests(driver):
    """Resources the current page asked for anywhere but this machine (map tiles, fonts…)."""
    try:
        urls = js(driver, "return performance.getEntriesByType('resource').map(e => e.name)") or []
    except Exception:  # no page, or a page that is gone
        return []
    local = re.compile(r"^(https?://(127\.0\.0\.1|localhost)(:\d+)?/|data:|blob:)")
    return [f"requested off this machine: {url}" for url in urls if not local.match(url)]


def console_problems(driver, allowed=None):
    allowed_pattern = re.compile(allowed) if allowed else None
    problems = []
    for entry in driver.get_log("browser"):
        message = entry.get("message", "")
        if allowed_pattern and allowed_pattern.search(message):
            continue
        if CSP_PATTERN.search(message) or (entry.get("source") == "javascript" and entry.get("level") == "SEVERE"):
            problems.append(f"{entry.get('level')} {entry.get('source')}: {message}")
    return problems


# ---------------------------------------------------------------- the app's states and actions

def wait_for_ready(driver):
    wait_until(driver, lambda d: body_data(d, "ready") == "true", "the app never set body[data-ready=true]")


def wait_signed_in(driver, username=None):
    wait_until(driver, lambda d: body_data(d, "signedIn") == "true", "the app did not sign in")
    if username:
        wait_until(driver, lambda d: username in (text_of(d, "#whoami") or ""),
                   f"#whoami does not show {username}")


def wait_signed_out(driver):
    wait_until(driver, lambda d: body_data(d, "signedIn") == "false", "the app did not sign out")


def wait_idle(driver):
    """No API request in flight (body[data-loading] is 0)."""
    wait_until(driver, lambda d: (body_data(d, "loading") or "0") == "0", "requests still in flight")


def fill(driver, selector, value):
    """Replaces a field's text as a person does: select all, delete, type (each an input event;
    WebDriver's clear() fires none)."""
    element = driver.find_element(By.CSS_SELECTOR, selector)
    if element.get_attribute("value"):
        element.send_keys(Keys.CONTROL, "a")
        element.send_keys(Keys.BACKSPACE)
    if value:
        element.send_keys(value)
    return element


def click(driver, selector):
    # A list the app redraws between finding the element and clicking it (a position fix, a
    # live change) leaves a stale element: the new one, under the same selector, is clicked.
    for attempt in range(5):
        element = wait_until(driver, lambda d: _clickable(d, selector), f"{selector} is not there to click")
        try:
            element.click()
            return element
        except StaleElementReferenceException:
            if attempt == 4:
                raise


def _clickable(driver, selector):
    elements = driver.find_elements(By.CSS_SELECTOR, selector)
    if elements and elements[0].is_displayed() and elements[0].is_enabled():
        return elements[0]
    return False


def log_in(driver, user):
    """Signs in through the login form (the app starts signed out)."""
    if not displayed(driver, "#login-form") and exists(driver, "#show-login"):
        click(driver, "#show-login")
    fill(driver, "#login-username", user.username)
    fill(driver, "#login-password", user.password)
    click(driver, "#login-submit")
    wait_signed_in(driver, user.username)


def open_app_as(test, user, position, size=DESKTOP):
    """A browser at `position`, signed in as user, on the map, with a stream open."""
    driver = test.open_browser(size=size, position=position)
    log_in(driver, user)
    wait_for_stream(driver)
    return driver


def wait_for_stream(driver):
    wait_until(driver, lambda d: body_data(d, "stream") == "open", "the live stream did not open")


def dialog_open(driver, selector):
    return bool(js(driver, "const d = document.querySelector(arguments[0]); return !!(d && d.open)", selector))


def wait_dialog(driver, selector, is_open=True):
    wait_until(driver, lambda d: dialog_open(d, selector) == is_open,
               f"{selector} did not {'open' if is_open else 'close'}")


def find_in_queue(driver, item):
    """Waits for an item of the moderation queue, following "Show more" while there are more
    pages (the queue is the tenant's: other tests' reports come first)."""
    def found(d):
        if exists(d, item):
            return True
        if displayed(d, "#moderation-queue-more"):
            d.find_element(By.CSS_SELECTOR, "#moderation-queue-more").click()
        return False
    wait_until(driver, found, f"{item} is not in the moderation queue")


def choose(driver, selector, value):
    """Sets a <select> to value, as a user picking an option would (change event)."""
    from selenium.webdriver.support.select import Select
    Select(driver.find_element(By.CSS_SELECTOR, selector)).select_by_value(value)


def show_tab(driver, name):
    click(driver, f"#tab-{name}")
    wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, f"#tab-{name}").get_attribute("aria-selected") == "true",
               f"#tab-{name} was not selected")


# What shows each tab's panel is shown (on a desktop several may be shown at once).
PANEL_PROBES = {"map": "#map", "list": "#search-input", "places": "#new-place-button"}


def show_panel(driver, name):
    """Brings a tab's panel into view: clicks its tab unless the panel is shown already."""
    if not displayed(driver, PANEL_PROBES[name]):
        show_tab(driver, name)
    wait_until(driver, lambda d: displayed(d, PANEL_PROBES[name]), f"the {name} panel is not shown")


def save_note_in_dialog(driver, text, visibility="public", place_id=None):
    wait_dialog(driver, "#note-dialog")
    fill(driver, "#note-body", text)
    choose(driver, "#note-visibility", visibility)
    if place_id is not None:
        wait_until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#note-place option[value="{place_id}"]'),
                   f"place {place_id} is not among #note-place's options")
        choose(driver, "#note-place", str(place_id))
    click(driver, "#note-save")
    wait_dialog(driver, "#note-dialog", is_open=False)


# ---------------------------------------------------------------- the map

def map_zoom(driver):
    return js(driver, "return lrApp.map.getZoom()")


def set_zoom(driver, zoom, center=None):
    if center is None:
        js(driver, "lrApp.map.setZoom(arguments[0], {animate: false})", zoom)
    else:
        js(driver, "lrApp.map.setView(arguments[1], arguments[0], {animate: false})", zoom, list(center))
    wait_until(driver, lambda d: map_zoom(d) == zoom, f"the map did not zoom to {zoom}")
    wait_idle(driver)  # what the new view shows has loaded


def map_center(driver):
    center = js(driver, "const c = lrApp.map.getCenter(); return [c.lat, c.lng]")
    return (center[0], center[1])


def me_marker_position(driver):
    """(lat, lng) of the Leaflet layer whose element is (or holds) .me-marker, or None."""
    found = js(driver, """
        let found = null;
        lrApp.map.eachLayer(layer => {
          const el = layer.getElement ? layer.getElement() : null;
          if (el && (el.matches('.me-marker') || el.querySelector('.me-marker')) && layer.getLatLng) {
            const p = layer.getLatLng(); found = [p.lat, p.lng];
          }
        });
        return found;""")
    return tuple(found) if found else None


def note_marker_selector(note_id=None, owner=None):
    selector = ".note-marker"
    if owner:
        selector += f".{owner}"
    if note_id is not None:
        selector += f'[data-note-id="{note_id}"]'
    return selector


def drag_map(driver, dx, dy):
    """A real mouse drag on the map (press, several moves, release)."""
    map_element = driver.find_element(By.ID, "map")
    actions = ActionChains(driver, duration=50)
    actions.move_to_element_with_offset(map_element, -dx // 2, -dy // 2).click_and_hold()
    steps = 8
    for _ in range(steps):
        actions.move_by_offset(dx // steps, dy // steps)
    actions.release().perform()


def click_map_at(driver, x, y, right=False):
    """Clicks #map at (x, y) pixels from its top left corner."""
    map_element = driver.find_element(By.ID, "map")
    rect = map_element.rect
    actions = ActionChains(driver).move_to_element_with_offset(
        map_element, int(x - rect["width"] / 2), int(y - rect["height"] / 2))
    (actions.context_click() if right else actions.click()).perform()


def container_point_to_latlng(driver, x, y):
    point = js(driver, "const p = lrApp.map.containerPointToLatLng([arguments[0], arguments[1]]); return [p.lat, p.lng]", x, y)
    return (point[0], point[1])


def visible_cluster_counts(driver):
    return js(driver, "return [...document.querySelectorAll('#map .cluster-marker')].map(e => Number(e.dataset.count))")


# ---------------------------------------------------------------- pins, popups and my position

def show_map(driver):
    show_panel(driver, "map")


def wait_me_marker_at(driver, position, tolerance_m=2):
    def there(d):
        found = me_marker_position(d)
        return found is not None and ground_distance(found, position) <= tolerance_m
    wait_until(driver, there, f"the .me-marker is not at {position} (it is at {me_marker_position(driver)})")


def wait_centered_on(driver, position, tolerance_m=15):
    wait_until(driver, lambda d: ground_distance(map_center(d), position) <= tolerance_m,
               f"the map is not centred on {position} (centre {map_center(driver)})")


def wait_pin(driver, note_id, owner=None):
    return wait_until(driver, lambda d: exists(d, note_marker_selector(note_id, owner)),
                      f"no {note_marker_selector(note_id, owner)} on the map")


def marker_colours(driver, selector):
    """Computed colours of a pin and everything in it: what tells mine from others'."""
    return js(driver, """
        const root = document.querySelector(arguments[0]);
        return [root, ...root.querySelectorAll('*')].map(e => {
          const s = getComputedStyle(e);
          return [s.backgroundColor, s.color, s.fill, s.stroke, s.borderTopColor].join(' ');
        });""", selector)


def open_popup(driver, note_id):
    """Taps a pin (unless its popup is open already: a tap would close it) and waits for its popup."""
    popup = f'.note-popup[data-note-id="{note_id}"]'
    if displayed(driver, popup):
        return popup
    pin = wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, note_marker_selector(note_id)),
                     f"no pin for note {note_id}")
    pin.click()
    wait_until(driver, lambda d: displayed(d, popup), f"tapping the pin did not open {popup}")
    return popup
