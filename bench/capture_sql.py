"""Writes bench/pgbench/<op>.sql from the SQL the service itself runs.

With log_min_duration_statement = 0 on the bench cluster, one request of each
kind goes to the service (directly, not through nginx); the PostgreSQL log lines
it adds ("statement: …" and "execute <name>: …" with their "DETAIL: parameters:")
are that request's statements, in order: the access-token lookup, then either
BEGIN, set_config('app.tenant_id', …), the statements, COMMIT (writes), or
set_config and one statement in one pipeline (reads; replayed by pgbench
between \startpipeline and \endpipeline). Each bind parameter becomes:
a pgbench variable when its value is one of the request's coordinates or ids
(the request uses known values: London's centre, a known note id), otherwise the
captured value as a literal (tenant id, viewer id, limit, token hash, search
pattern). The variables are drawn per transaction exactly as bench/wrk/common.lua
draws them: a random city of bench/cities.tsv, a point within ±5 km of it.
"""
import math
import os
import re
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (\w+):  (.*)$")
NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
PARAM = re.compile(r"\$(\d+) = (NULL|'(?:[^']|'')*')")

CITY = (51.5074, -0.1278)  # London, the first of cities.tsv


def cities():
    rows = []
    with open(os.path.join(BENCH, "cities.tsv")) as f:
        for line in f:
            name, lat, lng = line.rstrip("\n").split("\t")
            rows.append((name, float(lat), float(lng)))
    return rows


def header(note_range):
    rows = cities()

    def case(values):
        return "CASE " + " ".join(f"WHEN :c = {i + 1} THEN {v!r}" for i, v in enumerate(values)) + " ELSE 0.0 END"

    return "\n".join([
        "\\set c random(1, %d)" % len(rows),
        "\\set clat " + case([r[1] for r in rows]),
        "\\set clng " + case([r[2] for r in rows]),
        "\\set k " + case([round(1 / math.cos(math.radians(r[1])), 9) for r in rows]),
        "\\set lat :clat + random(-5000, 5000) / 111320.0",
        "\\set lng :clng + random(-5000, 5000) / 111320.0 * :k",
        "\\set min_lng :clng - 0.045 * :k",
        "\\set max_lng :clng + 0.045 * :k",
        "\\set min_lat :clat - 0.045",
        "\\set max_lat :clat + 0.045",
        # Nearest's box around the drawn point for its 10 km (BoundingBox(around:radius:)):
        # the walk's prefilter, which must move with the point.
        "\\set near_south :lat - %r" % NEAR_SPAN,
        "\\set near_north :lat + %r" % NEAR_SPAN,
        "\\set near_west :lng - %r * :k" % NEAR_SPAN,
        "\\set near_east :lng + %r * :k" % NEAR_SPAN,
        "\\set id random(%d, %d)" % note_range,
    ])


# The latitude span of a 10 km circle's box, in degrees, as the service computes it.
NEAR_SPAN = 10000 / 6356752.3 * 1.01 * 180 / math.pi


def near_box():
    """The box the service puts around London's centre for nearest within 10 km, exactly as
    BoundingBox(around:radius:) computes it, so that the captured numbers are recognised."""
    angle = 10000 / 6356752.3 * 1.01
    span = angle * 180 / math.pi
    sine = math.sin(min(angle, math.pi / 2)) / math.cos(CITY[0] * math.pi / 180)
    lng_span = math.asin(sine) * 180 / math.pi
    return {CITY[1] - lng_span: "near_west", CITY[0] - span: "near_south", CITY[1] + lng_span: "near_east",
            CITY[0] + span: "near_north"}


def london_bbox():
    k = 1 / math.cos(math.radians(CITY[0]))
    return [round(CITY[1] - 0.045 * k, 5), round(CITY[0] - 0.045, 5), round(CITY[1] + 0.045 * k, 5),
            round(CITY[0] + 0.045, 5)]


def requests(token, note_id):
    auth = {"Authorization": "Bearer " + token}
    bbox = london_bbox()
    bbox_text = ",".join(f"{v:.5f}" for v in bbox)
    bbox_vars = dict(zip(bbox, ["min_lng", "min_lat", "max_lng", "max_lat"]))
    near = {CITY[0]: "lat", CITY[1]: "lng"}
    return [
        ("nearest", "GET", f"/v1/notes?near={CITY[0]},{CITY[1]}&radius_m=10000&limit=50", None, auth, near | near_box()),
        ("search-common", "GET", "/v1/notes?q=coffee&limit=50", None, auth, {}),
        ("search-rare", "GET", "/v1/notes?q=axolotl&limit=50", None, auth, {}),
        ("viewport", "GET", f"/v1/notes?bbox={bbox_text}", None, auth, bbox_vars),
        ("clusters", "GET", f"/v1/notes/clusters?zoom=10&bbox={bbox_text}", None, auth, bbox_vars),
        ("get", "GET", f"/v1/notes/{note_id}", None, auth, {note_id: "id"}),
        ("create", "POST", "/v1/notes",
         {"body": "benchmark note: coffee by the harbour 1", "lat": CITY[0], "lng": CITY[1]}, auth, near),
    ]


def parse(text):
    """[(pid, sql, {n: quoted value})] for the executed statements in a log excerpt."""
    entries = []  # (pid, level, message)
    for line in text.splitlines():
        match = ENTRY.match(line)
        if match:
            entries.append([match.group(1), match.group(2), match.group(3)])
        elif entries:
            entries[-1][2] += "\n" + line
    statements = []
    last = {}  # pid -> the statement its previous LOG entry executed (None after parse/bind)
    for pid, level, message in entries:
        if level == "LOG":
            match = re.match(r"duration: [\d.]+ ms  (statement|execute [^:]*): (.*)", message, re.S)
            last[pid] = None
            if match:
                statements.append([pid, match.group(2).strip(), {}, match.group(1)])
                last[pid] = statements[-1]
        elif level == "DETAIL" and message.startswith("parameters:") and last.get(pid):
            last[pid][2] = {int(n): v for n, v in PARAM.findall(message)}
    return statements


# What replicas run on their own timers, not for a request: the event log's horizon (polled
# every 100 ms; per tenant on Citus) and retention; what a replica asks once (whether the
# statement functions are installed, every 30 s); the access-token poller's epochs, tenants
# and revocations (every 200 ms, migrations 0045 and 0046); and on Citus the coordinator's
# deadlock detector, which asks each node for its lock waits every 2 s. The log interleaves
# them with the request's statements.
BACKGROUND = ("event_ids_after(", "event_log_start(", "event_log_mode(", "event_probe(",
              "purge_expired(", "purge_events(", "fold_note_grid(", "statement_functions(",
              "purge_auth_revocations(", "FROM auth_epochs WHERE tenant_id = ANY(",
              "SELECT id, slug, disabled_at IS NOT NULL FROM tenants", "FROM auth_revocations",
              "dump_local_wait_edges(")


def without_background(statements):
    """The request's statements: background ones dropped, with the settings statement that
    went before each on the same backend (its pipeline's first half), even when the log
    interleaves the request's own statements between the two."""
    kept = []
    for statement in statements:
        if any(name in statement[1] for name in BACKGROUND):
            # The backend's last statement kept, wherever the request's own lines fell between.
            mine = [i for i, s in enumerate(kept) if s[0] == statement[0]]
            if mine and kept[mine[-1]][1].lstrip().startswith("SELECT set_config("):
                del kept[mine[-1]]
            continue
        kept.append(statement)
    # A settings statement last on its backend lost its statement past the end of the
    # excerpt (a background poll that began as the log was read): not the request's.
    return [s for i, s in enumerate(kept)
            if not (s[1].lstrip().startswith("SELECT set_config(") and all(t[0] != s[0] for t in kept[i + 1:]))]


def substitute(sql, params, variables):
    used = set()
    for n in sorted(params, reverse=True):
        value = params[n]
        replacement = value
        if value != "NULL":
            raw = value[1:-1].replace("''", "'")
            try:
                number = float(raw)
                for marker, name in variables.items():
                    if abs(number - float(marker)) < 1e-9:
                        replacement = ":" + name
                        used.add(name)
                        break
            except ValueError:
                pass
            # The log shows no parameter types, and a quoted literal is of unknown type,
            # which some contexts cannot resolve (unary minus: -'85.05'). Numbers go in
            # bare (in parentheses, so a negative one cannot meet a minus as "--"), except
            # in set_config(), whose value is text.
            if replacement == value and NUMBER.match(raw) and "set_config(" not in sql:
                replacement = f"({raw})"
        sql = re.sub(r"\$%d(?!\d)" % n, lambda _: replacement, sql)
    return sql, used


def capture(psql, http, service_url, token, log_path, out_dir, note_id, note_range):
    psql("ALTER SYSTEM SET log_min_duration_statement = 0")
    psql("SELECT pg_reload_conf()")
    time.sleep(1)
    os.makedirs(out_dir, exist_ok=True)
    try:
        for name, method, path, body, headers, variables in requests(token, note_id):
            start = os.path.getsize(log_path)
            status, _ = http(method, service_url + path, body, headers)
            time.sleep(0.5)
            with open(log_path, errors="replace") as f:
                f.seek(start)
                excerpt = f.read()
            # A connection the pool opens meanwhile logs its setup (LibPQConnection): not the request's.
            statements = without_background(
                s for s in parse(excerpt) if "pg_reload_conf" not in s[1] and not s[1].lstrip().startswith("SET DateStyle"))
            lines = [f"-- {name}: captured from the service's own log for {method} {path} (HTTP {status}).",
                     "-- Generated by bench/capture_sql.py on every run; do not edit.", header(note_range)]
            used = set()
            # The service runs a statement unprepared (PQexecParams: "execute <unnamed>",
            # parsed and planned every time) when it wants per-query plans, e.g. search.
            # pgbench -M prepared would plan such a statement once (its literals are
            # constants), so those scripts run with -M extended instead.
            main = max(statements, key=lambda s: len(s[1])) if statements else None
            protocol = "extended" if main and main[3] == "execute <unnamed>" else "prepared"
            lines.insert(2, f"-- pgbench-protocol: {protocol}")
            # A read the service sends alone (PostgresPool.query(_:settings:)): set_config and
            # the statement in one libpq pipeline, one implicit transaction ended by a Sync,
            # no BEGIN/COMMIT. The log shows set_config through the extended protocol
            # ("execute"); pgbench replays the pair inside \startpipeline … \endpipeline.
            pipelined = False
            for _, sql, params, kind in statements:
                text, names = substitute(sql, params, variables)
                used |= names
                if kind.startswith("execute") and sql.lstrip().startswith("SELECT set_config("):
                    lines.append("\\startpipeline")
                    pipelined = True
                    lines.append(text.rstrip().rstrip(";") + ";")
                    continue
                lines.append(text.rstrip().rstrip(";") + ";")
                if pipelined:
                    lines.append("\\endpipeline")
                    pipelined = False
            missing = set(variables.values()) - used
            if missing:
                lines.insert(2, f"-- NOTE: {sorted(missing)} not found among the bind parameters; "
                                "those values repeat the captured request's.")
            if not statements or status >= 400:
                print(f"capture {name}: HTTP {status}, {len(statements)} statements", flush=True)
            with open(os.path.join(out_dir, name + ".sql"), "w") as f:
                f.write("\n".join(lines) + "\n")
    finally:
        psql("ALTER SYSTEM RESET log_min_duration_statement")
        psql("SELECT pg_reload_conf()")
