"""Schemathesis hooks for scripts/fuzz.sh: a real account, its token on every call.

Loaded through SCHEMATHESIS_HOOKS=hooks with this folder on PYTHONPATH. The
service and tenant come from FUZZ_BASE_URL and FUZZ_TENANT.

- Every request names the fuzzing tenant in X-Tenant (signup, login and refresh
  need it; on authenticated calls it must match the token's tenant).
- Authenticated calls carry the access token of an account signed up once. Its
  password is random and never shown to the generator, so no generated
  PATCH/DELETE /v1/me can change or delete it.
- POST /v1/auth/logout would end that session (or, with all=true, every session
  of the user), so each logout runs with a fresh session of a second account.
- Positive list and cluster queries are repaired to follow the rules OpenAPI
  cannot state (`in` needs `q`, `radius_m` needs `near`, `min_lat <= max_lat`),
  and every third positive login and refresh uses a real account's credentials;
  a place id in a positive note body becomes a real place's.
- With FUZZ_TRACE_FILE set, a line per response goes there for the summary.
"""

import itertools
import math
import os
import secrets
import threading

import requests
import schemathesis
from schemathesis.core.parameters import ParameterLocation

BASE_URL = os.environ["FUZZ_BASE_URL"].rstrip("/")
TENANT = os.environ["FUZZ_TENANT"]


class Account:
    """A user of the fuzzing tenant, signed up on first use."""

    def __init__(self, prefix):
        self.username = f"{prefix}-{secrets.token_hex(4)}"
        self.password = secrets.token_urlsafe(24)
        self.token = None
        self.lock = threading.Lock()

    def _post(self, path, field="access_token"):
        response = requests.post(
            f"{BASE_URL}{path}",
            json={"username": self.username, "password": self.password},
            headers={"X-Tenant": TENANT},
            timeout=30,
        )
        if response.status_code not in (200, 201):
            raise RuntimeError(f"fuzz hooks: {path} for {self.username} answered {response.status_code}: {response.text}")
        return response.json()[field]

    def access_token(self):
        """The token of the account's one long-lived session."""
        with self.lock:
            if self.token is None:
                self.token = self._post("/v1/auth/signup")
            return self.token

    def new_session(self):
        """A fresh session's token, for a call that ends its session."""
        self.access_token()
        return self._post("/v1/auth/login")

    def new_refresh_token(self):
        """A fresh session's refresh token."""
        self.access_token()
        return self._post("/v1/auth/login", field="refresh_token")


FUZZER = Account("fuzzer")
LOGOUT = Account("logout")
# Its credentials go into some positive login and refresh cases.
KNOWN = Account("known")
# Which of those cases: every third. Not `random`, which Hypothesis reseeds for every example.
LOGIN_COUNTER = itertools.count()
REFRESH_COUNTER = itertools.count()
IF_MATCH_COUNTER = itertools.count()
PLACE_LOCK = threading.Lock()
PLACE_ID = []


def place_id():
    """A place of the fuzzing tenant (fuzz.sh seeds the demo places), for note bodies that name one."""
    with PLACE_LOCK:
        if not PLACE_ID:
            headers = {"Authorization": f"Bearer {FUZZER.access_token()}"}
            places = requests.get(f"{BASE_URL}/v1/places?limit=1", headers=headers, timeout=30).json()["items"]
            if not places:
                places = [requests.post(f"{BASE_URL}/v1/places", headers=headers, timeout=30,
                                        json={"name": "Fuzzing base camp", "lat": 0, "lng": 0}).json()]
            PLACE_ID.append(places[0]["id"])
        return PLACE_ID[0]


@schemathesis.auth(refresh_interval=None, retry_on=[])
class BearerToken:
    """`Authorization: Bearer …` on every call; the service ignores it where no token is needed."""

    def get(self, case, context):
        return FUZZER.access_token()

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


@schemathesis.hook
def before_call(context, case, kwargs):
    """Always the fuzzing tenant: a random slug would only ever test `404 tenant_not_found`.

    A logout gets a session of its own, made right before the call: cases are
    generated in batches, and one `all=true` would end sessions made for the others.
    """
    case.headers = case.headers or {}
    case.headers["X-Tenant"] = TENANT
    if case.operation.path == "/v1/auth/logout" and case.headers.get("Authorization") == f"Bearer {FUZZER.access_token()}":
        case.headers["Authorization"] = f"Bearer {LOGOUT.new_session()}"


# ---------------------------------------------------------------------------
# Positive cases that the API's cross-parameter rules would only ever reject.
#
# OpenAPI cannot say "`in` needs `q`" or "`min_lat <= max_lat`", so most positive
# list and cluster queries would end at `400` before reaching SQL. Positive cases
# are repaired to follow those rules; negative cases are left alone, so the `400`
# paths stay covered by them and by the coverage phase.

LIST_OPERATIONS = {"/v1/notes", "/v1/users/{username}/notes", "/v1/notes/clusters", "/v1/places"}
MERCATOR_LIMIT = 85.0511287798066


def _positive(case, location):
    meta = case.meta
    return meta is not None and not meta.is_negative_at(location)


def _mercator_y(lat):
    lat = math.radians(max(-MERCATOR_LIMIT, min(MERCATOR_LIMIT, lat)))
    return (1 - math.asinh(math.tan(lat)) / math.pi) / 2


def _cells(box, zoom):
    """How many grid cells of `zoom` the box touches, as the service estimates it."""
    min_lng, min_lat, max_lng, max_lat = box
    width = (max_lng - min_lng) if min_lng <= max_lng else (180 - min_lng) + (max_lng + 180)
    size = 4 << zoom
    return (math.ceil(width / 360 * size) + 1) * (math.ceil((_mercator_y(min_lat) - _mercator_y(max_lat)) * size) + 1)


MAXIMUM_CELLS = 10_000


def _has_trigram(text):
    """Whether `q` has a run of 3 letters or digits, which the trigram indexes need (else 422)."""
    run = 0
    for character in text:
        run = run + 1 if character.isalnum() else 0
        if run >= 3:
            return True
    return False


def _repair_query(path, query):
    if "in" in query and "q" not in query:
        del query["in"]
    if isinstance(query.get("q"), str) and query.get("in") != "username" and not _has_trigram(query["q"]):
        # A q no trigram index can serve is `422 query_too_broad`, whatever else the query says.
        query["q"] = (query["q"] + "abc")[-100:] if query["q"] else "abc"
    if "radius_m" in query and "near" not in query:
        del query["radius_m"]
    # A cursor is only ever valid as the next_cursor of the same query.
    query.pop("cursor", None)
    if isinstance(query.get("bbox"), str):
        try:
            box = [float(part) for part in query["bbox"].split(",")]
        except ValueError:
            return
        if len(box) == 4:
            if box[1] > box[3]:
                box[1], box[3] = box[3], box[1]
            query["bbox"] = ",".join(repr(value) for value in box)
            zoom = query.get("zoom")
            if path == "/v1/notes/clusters" and (isinstance(zoom, int) or (isinstance(zoom, str) and zoom.isdigit())):
                zoom = int(zoom)
                while zoom > 0 and _cells(box, zoom) > MAXIMUM_CELLS:
                    zoom -= 1
                query["zoom"] = zoom


@schemathesis.hook
def map_case(context, case):
    operation = case.operation
    if operation.path in LIST_OPERATIONS and isinstance(case.query, dict) and _positive(case, ParameterLocation.QUERY):
        _repair_query(operation.path, case.query)
    if operation.path == "/v1/notes/{id}" and isinstance(case.headers, dict) and "If-Match" in case.headers \
            and _positive(case, ParameterLocation.HEADER) and next(IF_MATCH_COUNTER) % 3 != 0:
        # A generated ETag never matches: keep one in three for the 412 path, let the others through.
        del case.headers["If-Match"]
    if operation.path in ("/v1/notes", "/v1/notes/{id}") and operation.method.upper() in ("POST", "PATCH") \
            and isinstance(case.body, dict) and _positive(case, ParameterLocation.BODY) and case.body.get("place_id") is not None:
        # A generated place id names no place; a real one takes the note through the foreign key.
        case.body["place_id"] = place_id()
    if (operation.method.upper(), operation.path) == ("POST", "/v1/auth/login") and isinstance(case.body, dict) \
            and _positive(case, ParameterLocation.BODY) and next(LOGIN_COUNTER) % 3 == 0:
        # Random credentials only ever fail: sometimes real ones, so the 200 paths (and their links) run too.
        case.body = {"username": KNOWN.username, "password": KNOWN.password}
        KNOWN.access_token()
    if (operation.method.upper(), operation.path) == ("POST", "/v1/auth/refresh") and isinstance(case.body, dict) \
            and _positive(case, ParameterLocation.BODY) and next(REFRESH_COUNTER) % 3 == 0:
        case.body = {"refresh_token": KNOWN.new_refresh_token()}
    return case


# ---------------------------------------------------------------------------
# A line per response, for the summary: operation, phase, mode, status.

TRACE = os.environ.get("FUZZ_TRACE_FILE")
TRACE_LOCK = threading.Lock()


@schemathesis.hook
def after_call(context, case, response):
    if not TRACE:
        return
    meta = case.meta
    phase = meta.phase.name.value if meta is not None and hasattr(meta.phase.name, "value") else (meta.phase.name if meta else "-")
    mode = meta.generation.mode.value if meta is not None else "-"
    with TRACE_LOCK, open(TRACE, "a") as trace:
        trace.write(f"{case.operation.method.upper()} {case.operation.path}\t{phase}\t{mode}\t{response.status_code}\n")
