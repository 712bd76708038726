#!/usr/bin/env python3
"""The measuring half of bench/run.sh (which sets BENCH_* and starts everything).

1. logs in once for a token;
2. captures the service's own SQL per operation (log_min_duration_statement=0,
   one request each) and writes bench/pgbench/<op>.sql from it (capture_sql.py);
3. per operation and concurrency: wrk through nginx, then pgbench with that SQL,
   with /proc CPU deltas (service, nginx, PostgreSQL) and the service's peak RSS;
4. a perf profile of the service under nearest-50 load;
5. with run.sh --peers (BENCH_PEER_URL): nearest and create also against the Vapor peer
   (bench/peers/vapor-peer) through the same nginx, alternating with ours at each
   concurrency (ours, peer, ours, peer: BENCH_PEER_ROUNDS rounds, 2), with its CPU;
6. writes bench/results/<date>-<mode>[-partial][-peers].md and prints it.
"""
import json
import math
import multiprocessing
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_sql  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
E = os.environ
MODE = E["BENCH_MODE"]
WORK = E["BENCH_WORK"]
SOCK = E["BENCH_SOCKET"]
PG_PORT = E["BENCH_PG_PORT"]
SERVICE_PID = int(E["BENCH_SERVICE_PID"])
URL = E["BENCH_URL"]
SERVICE_URL = E["BENCH_SERVICE_URL"]
QUICK = MODE == "quick"
# run.sh --peers: the peer's URL through nginx and its pid; the operations it serves.
PEER_URL = E.get("BENCH_PEER_URL", "")
PEER_PID = int(E["BENCH_PEER_PID"]) if E.get("BENCH_PEER_PID") else None
PEER_OPS = ("nearest", "create")
PEER_ROUNDS = int(E.get("BENCH_PEER_ROUNDS", "2"))
CONNS = [8, 32] if QUICK else [8, 32, 128]
DURATION = 5 if QUICK else 20
# pgbench's rate settles within seconds (thousands of transactions); 10 s keeps the
# full run (3 concurrencies x 7 operations) inside the 15 minutes the issue allows.
PG_DURATION = 5 if QUICK else 10
WARMUP = 2 if QUICK else 5
TICK = os.sysconf("SC_CLK_TCK")
AS_POSTGRES = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []

OPS = [
    # name, wrk script, pgbench scripts (weights), description
    ("nearest", "nearest.lua", ["nearest"], "nearest 50 within 10 km"),
    ("search", "search.lua", ["search-common", "search-rare"], "text search, coffee / axolotl"),
    ("viewport", "viewport.lua", ["viewport"], "viewport (bbox of a city)"),
    ("clusters", "clusters.lua", ["clusters"], "clusters, zoom 10"),
    ("get", "get.lua", ["get"], "get one note"),
    ("create", "create.lua", ["create"], "create a note"),
    ("login", "login.lua", [], "login (scrypt N=2^17)"),
]
# BENCH_BLOCKS=50: instead of the runs above, the reads a block must filter, for benchseed
# with that many blocks of the busiest authors against none, alternating (issue 34: within
# 1.2 x).
BLOCKS = int(E.get("BENCH_BLOCKS", "0"))
BLOCK_OPS = ("nearest", "search", "viewport", "clusters")
BLOCK_ROUNDS = int(E.get("BENCH_BLOCK_ROUNDS", "2"))
# The same answers as plainly as SQL gives them (bench/plain/): the reads' floor.
PLAIN = {"nearest", "search", "viewport", "clusters", "get"}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def psql(sql):
    out = subprocess.run(AS_POSTGRES + ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", SOCK, "-p", PG_PORT,
                                        "-U", "postgres", "-d", "landmark_remark", "-c", sql],
                         check=True, capture_output=True, text=True, cwd="/")
    return out.stdout.strip()


def http(method, url, body=None, headers=None):
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


# ---- /proc ---------------------------------------------------------------

def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2:].split()  # fields from 3 (state) on


def children_of(ppid):
    kids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if int(stat_fields(name)[1]) == ppid:
                    kids.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return kids


def ticks(pid, with_children_dead=False):
    try:
        f = stat_fields(pid)
    except OSError:
        return 0
    value = int(f[11]) + int(f[12])  # utime, stime
    if with_children_dead:
        value += int(f[13]) + int(f[14])  # cutime, cstime: exited (reaped) children
    return value


def tree_ticks(root):
    # The root with its reaped children, plus its live children (backends, workers).
    return ticks(root, True) + sum(ticks(k) for k in children_of(root))


# The cluster's node directories (scripts/postgres.sh layout): one, or on Citus (BENCH_CITUS)
# the coordinator first and then the workers, whose CPU counts as PostgreSQL's too.
PG_DIRS = E.get("BENCH_PG_DIRS", os.path.join(WORK, "pg")).split()


def postmaster_pids():
    pids = []
    for node in PG_DIRS:
        with open(os.path.join(node, "data", "postmaster.pid")) as f:
            pids.append(int(f.readline()))
    return pids


def nginx_pid():
    with open(os.path.join(WORK, "nginx", "nginx.pid")) as f:
        return int(f.read().strip())


def machine():
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    return sum(parts), parts[3] + parts[4]  # total, idle + iowait


def snapshot():
    total, idle = machine()
    own = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"service": ticks(SERVICE_PID), "nginx": tree_ticks(nginx_pid()), "postgres": sum(tree_ticks(pid) for pid in postmaster_pids()),
            "peer": ticks(PEER_PID) if PEER_PID else 0,
            "driver": (own.ru_utime + own.ru_stime) * TICK, "total": total, "idle": idle, "time": time.time()}


def delta(a, b):
    d = {k: b[k] - a[k] for k in a}
    d["busy_cores"] = (d["total"] - d["idle"]) / d["total"] * os.cpu_count() if d["total"] else 0
    return d


def status_kb(field, pid=None):
    with open(f"/proc/{pid or SERVICE_PID}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak_rss():
    try:
        with open(f"/proc/{SERVICE_PID}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---- load generators ------------------------------------------------------

RESULT = re.compile(r"RESULT (.*)")


def wrk(op, script, conns, seconds, token, extra_env, url=URL):
    env = {**E, **extra_env, "BENCH_DIR": BENCH, "BENCH_TOKEN": token, "BENCH_OP": op, "BENCH_CONNS": str(conns)}
    command = ["wrk", "-t", str(min(2, conns)), "-c", str(conns), "-d", f"{seconds}s", "--timeout", "10s", "--latency",
               "-s", os.path.join(BENCH, "wrk", script), url]
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    match = RESULT.search(out.stdout)
    if not match:
        log(out.stdout, out.stderr)
        return None
    return {k: float(v) for k, v in (kv.split("=") for kv in match.group(1).split()) if k not in ("op",)}


def pgbench(names, conns, seconds, tag, plain=None):
    """The captured scripts bench/pgbench/<name>.sql as landmark_app; with plain (the
    bench tenant's and benchseed's ids), bench/plain/<name>.sql instead, as the tables'
    owner, behind the captured script's variable draws (bench/plain/README.md)."""
    prefix = os.path.join(WORK, "pgbench-logs", tag)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    for old in os.listdir(os.path.dirname(prefix)):
        if old.startswith(tag + "."):
            os.remove(os.path.join(os.path.dirname(prefix), old))
    with open(os.path.join(BENCH, "pgbench", names[0] + ".sql")) as f:
        found = re.search(r"^-- pgbench-protocol: (\w+)", f.read(), re.M)
    protocol = "prepared" if plain else (found.group(1) if found else "prepared")
    command = ["pgbench", "-n", "-M", protocol, "-c", str(conns), "-j", str(min(2, conns)), "-T", str(seconds),
               "-h", SOCK, "-p", PG_PORT, "-U", "landmark_owner" if plain else "landmark_app", "-l",
               f"--log-prefix={prefix}"]
    for name in names:
        command += ["-f", (plain_script(name) if plain else os.path.join(BENCH, "pgbench", name + ".sql")) + "@1"]
    if plain:
        command += ["-D", f"tenant={plain[0]}", "-D", f"viewer={plain[1]}"]
    command.append("landmark_remark")
    out = subprocess.run(command, capture_output=True, text=True, cwd=WORK)
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out.stdout)
    failed = re.search(r"number of failed transactions: (\d+)", out.stdout)
    if not tps:
        log(out.stdout[-2000:], out.stderr[-2000:])
        return None
    latencies = []
    for name in os.listdir(os.path.dirname(prefix)):
        if name.startswith(tag + "."):
            with open(os.path.join(os.path.dirname(prefix), name)) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 3 and parts[2].isdigit():
                        latencies.append(int(parts[2]) / 1000.0)
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] if latencies else float("nan")

    errors = len(re.findall(r"ERROR", out.stderr))
    return {"tps": float(tps.group(1)), "protocol": protocol, "p50_ms": pct(50), "p99_ms": pct(99),
            "failed": int(failed.group(1)) if failed else 0, "stderr_errors": errors}


def plain_script(name):
    """bench/plain/<name>.sql behind the \\set lines of the captured bench/pgbench/<name>.sql."""
    with open(os.path.join(BENCH, "pgbench", name + ".sql")) as f:
        draws = [line for line in f if line.startswith("\\set ")]
    with open(os.path.join(BENCH, "plain", name + ".sql")) as f:
        body = f.read()
    path = os.path.join(WORK, f"plain-{name}.sql")
    with open(path, "w") as f:
        f.write("".join(draws) + body)
    return path


def scrypt_worker(deadline):
    import hashlib
    count = 0
    while time.time() < deadline:
        hashlib.scrypt(b"bench lighthouse 2026 harbour", salt=os.urandom(16), n=1 << 17, r=8, p=1,
                       maxmem=256 << 20, dklen=32)
        count += 1
    return count


def raw_scrypt_rate(seconds):
    workers = os.cpu_count()
    start = time.time()
    with multiprocessing.Pool(workers) as pool:
        counts = pool.map(scrypt_worker, [start + seconds] * workers)
    return sum(counts) / (time.time() - start)


def perf_profile(token, extra_env, seconds):
    perf = subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "999", "-o", "/dev/null", "--", "true"],
                          capture_output=True, text=True)
    if perf.returncode != 0:
        return None, "perf record does not work here: " + perf.stderr.strip()[-300:]
    data = os.path.join(WORK, "perf.data")
    env = {**E, **extra_env, "BENCH_DIR": BENCH, "BENCH_TOKEN": token, "BENCH_OP": "nearest-perf", "BENCH_CONNS": "32"}
    load = subprocess.Popen(["wrk", "-t", "2", "-c", "32", "-d", f"{seconds + 2}s", "--timeout", "10s", "-s",
                             os.path.join(BENCH, "wrk", "nearest.lua"), URL], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "999", "-p", str(SERVICE_PID), "-o", data, "--",
                    "sleep", str(seconds)], capture_output=True)
    load.communicate()
    report = {}
    for key in ("symbol", "dso"):
        out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", key, "--stdio", "-q",
                              "--percent-limit", "0.3"], capture_output=True, text=True)
        lines = [re.sub(r"(\s+-)+\s*$", "", l.strip()) for l in out.stdout.splitlines()
                 if l.strip() and not l.startswith("#")]
        try:
            demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(lines),
                                       capture_output=True, text=True).stdout.splitlines()
            if len(demangled) == len(lines):
                lines = demangled
        except OSError:
            pass
        report[key] = lines
    return report, None


# ---- the peer ------------------------------------------------------------------

def peer_runs(op, script, conns, token, extra_env, first_ours):
    """Ours and the peer in turn at one concurrency: the ours run just made (the main
    table's), then peer, ours, peer, … for BENCH_PEER_ROUNDS rounds. Each side's
    requests and CPU ticks are summed over its runs; req/s and p50/p99 are the means
    of its runs."""
    runs = {"ours": [first_ours], "peer": []}
    for round_ in range(PEER_ROUNDS):
        if round_ > 0:
            before = snapshot()
            service = wrk(op, script, conns, DURATION, token, extra_env)
            runs["ours"].append((service, delta(before, snapshot())))
        before = snapshot()
        peer = wrk(op, script, conns, DURATION, token, extra_env, url=PEER_URL)
        runs["peer"].append((peer, delta(before, snapshot())))
    out = {"op": op, "conns": conns, "rounds": PEER_ROUNDS}
    for side, process in (("ours", "service"), ("peer", "peer")):
        done = [(w, c) for w, c in runs[side] if w]
        requests = sum(w.get("requests", 0) for w, _ in done)
        mean = lambda k: statistics.mean(w[k] for w, _ in done) if done else None  # noqa: E731
        out[side] = {
            "runs": [w for w, _ in runs[side]],
            "rps": mean("rps"), "p50_ms": mean("p50_ms"), "p99_ms": mean("p99_ms"),
            "errors": sum(int(w.get("non2xx", 0)) + int(w.get("socket_errors", 0)) for w, _ in done),
            "requests": requests,
            "cpu_ms_per_req": (sum(c[process] for _, c in done) / TICK * 1000 / requests) if requests else None,
            "postgres_ms_per_req": (sum(c["postgres"] for _, c in done) / TICK * 1000 / requests) if requests else None,
            "busy_cores": mean_of([c["busy_cores"] for _, c in done]),
        }
    log(json.dumps({"peer": op, "conns": conns, "ours_rps": [w and w.get("rps") for w, _ in runs["ours"]],
                    "peer_rps": [w and w.get("rps") for w, _ in runs["peer"]]}))
    return out


def peer_check(token):
    """Before any run: the nearest page at a few points from ours (signed in as benchseed,
    who has no private notes, so it sees exactly the public ones) and from the peer,
    straight to each process: the same ids in the same order, and the items as JSON values,
    whatever the keys' order (the peer does not sort them: bench/README.md) (next_cursor is each side's own opaque string; benchseed's own note, the capture's
    create at London's centre, is is_mine true in ours and false in the peer's, which
    knows no viewer, so ours' is_mine is read as false for the comparison)."""
    points = [(51.5074, -0.1278), (51.52, -0.10), (48.8566, 2.3522), (40.7128, -74.0060), (35.6762, 139.6503),
              (-33.8688, 151.2093), (64.1466, -21.9426), (52.3676, 4.9041)]
    checks = []
    for lat, lng in points:
        path = f"/v1/notes?near={lat:.5f},{lng:.5f}&radius_m=10000&limit=50"
        s_status, ours = http("GET", SERVICE_URL + path, headers={"Authorization": "Bearer " + token})
        p_status, peer = http("GET", PEER_URL + path)
        ok = s_status == 200 and p_status == 200
        ours_items = [n["id"] for n in json.loads(ours)["items"]] if s_status == 200 else []
        peer_items = [n["id"] for n in json.loads(peer)["items"]] if p_status == 200 else []
        raw = lambda body: json.dumps([{**n, "is_mine": False} for n in json.loads(body)["items"]], sort_keys=True)  # noqa: E731
        checks.append({"point": [lat, lng], "status": [s_status, p_status], "count": [len(ours_items), len(peer_items)],
                       "same_ids": ok and ours_items == peer_items,
                       "same_id_set": ok and set(ours_items) == set(peer_items),
                       "same_bytes": ok and raw(ours) == raw(peer)})
        if ok and raw(ours) != raw(peer):
            with open(os.path.join(WORK, f"peer-check-{lat}-{lng}.txt"), "w") as f:
                f.write(ours + "\n" + peer + "\n")
    # A create from each: the same keys, the same fixed values.
    created = []
    for url, headers in ((SERVICE_URL, {"Authorization": "Bearer " + token}), (PEER_URL, {})):
        status, body = http("POST", url + "/v1/notes", {"body": "peer check", "lat": 51.5, "lng": -0.12}, headers)
        created.append((status, json.loads(body) if status == 201 else body))
    same_create = all(s == 201 for s, _ in created) and set(created[0][1]) == set(created[1][1]) and all(
        created[0][1][k] == created[1][1][k] for k in ("body", "lat", "lng", "is_mine", "visibility", "place_id", "author"))
    log(json.dumps({"peer_check": checks, "create": [[s, b] for s, b in created], "same_create": same_create}))
    return {"nearest": checks, "create_status": [s for s, _ in created], "same_create": same_create}


def plain_check(token, ids, note_id):
    """Before any run: each plain script, with the captured request's values, returns the
    rows the service returned for that request (ids in order; for clusters the counts and
    centres). A plain script that answered something else would make a floor of nothing."""
    bbox = capture_sql.london_bbox()
    values = {"lat": capture_sql.CITY[0], "lng": capture_sql.CITY[1], "min_lng": bbox[0], "min_lat": bbox[1],
              "max_lng": bbox[2], "max_lat": bbox[3], "id": note_id, "tenant": ids[0], "viewer": ids[1]}
    bbox_text = ",".join(f"{v:.5f}" for v in bbox)
    paths = {"nearest": f"/v1/notes?near={capture_sql.CITY[0]},{capture_sql.CITY[1]}&radius_m=10000&limit=50",
             "search-common": "/v1/notes?q=coffee&limit=50", "search-rare": "/v1/notes?q=axolotl&limit=50",
             "viewport": f"/v1/notes?bbox={bbox_text}", "clusters": f"/v1/notes/clusters?zoom=10&bbox={bbox_text}",
             "get": f"/v1/notes/{note_id}"}
    # The capture's create is a grid delta until the service's folder takes it (each second);
    # the plain clusters statement reads folded cells only.
    deadline = time.time() + 15
    while psql("SELECT count(*) FROM note_grid_deltas") != "0" and time.time() < deadline:
        time.sleep(0.2)
    checks = {}
    for name, path in paths.items():
        status, body = http("GET", SERVICE_URL + path, headers={"Authorization": "Bearer " + token})
        answer = json.loads(body) if status == 200 else {}
        command = AS_POSTGRES + ["psql", "-X", "-q", "-At", "-F", "|", "-v", "ON_ERROR_STOP=1", "-h", SOCK, "-p", PG_PORT,
                                 "-U", "postgres", "-d", "landmark_remark", "-f", os.path.join(BENCH, "plain", name + ".sql")]
        for key, value in values.items():
            command[len(AS_POSTGRES) + 1:len(AS_POSTGRES) + 1] = ["-v", f"{key}={value}"]
        out = subprocess.run(command, capture_output=True, text=True, cwd="/")
        rows = [line.split("|") for line in out.stdout.splitlines() if line]
        if name == "clusters":
            ours = [(c["count"], round(c["lat"], 5), round(c["lng"], 5)) for c in answer.get("items", answer.get("clusters", []))]
            plain = [(int(r[2]), round(float(r[0]), 5), round(float(r[1]), 5)) for r in rows]
        else:
            items = answer.get("items", [answer] if "id" in answer else [])
            ours = [str(n["id"]) for n in items]
            plain = [r[0] for r in rows][:len(ours) if name != "get" else None]
        checks[name] = {"status": status, "rows": len(plain), "same": status == 200 and bool(ours) and ours == plain,
                        "error": out.stderr.strip()[-300:] or None}
    log(json.dumps({"plain_check": checks}))
    return checks


def block_runs(token, extra_env):
    """Each read with no blocks and with BLOCKS of the busiest authors blocked, alternating
    BLOCK_ROUNDS times per concurrency, so the machine's drift falls on both alike."""
    authors = psql(f"""SELECT string_agg(username, ',') FROM (
        SELECT u.username FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE t.slug = 'bench' AND u.username <> 'benchseed'
        ORDER BY (SELECT count(*) FROM notes n WHERE n.tenant_id = u.tenant_id AND n.user_id = u.id) DESC, u.id
        LIMIT {BLOCKS}) s""").split(",")
    auth = {"Authorization": "Bearer " + token}

    def set_blocks(on):
        for name in authors:
            status, body = http("PUT" if on else "DELETE", f"{SERVICE_URL}/v1/me/blocks/{name}", None, auth)
            assert status == 204, (status, body)

    rows = []
    only = [name for name in E.get("BENCH_ONLY", "").split(",") if name]
    for op, script, _, description in OPS:
        if op not in BLOCK_OPS or (only and op not in only):
            continue
        log(f"== {op}: warm-up {WARMUP}s")
        wrk(op, script, CONNS[0], WARMUP, token, extra_env)
        for conns in CONNS:
            runs = {False: [], True: []}
            for _ in range(BLOCK_ROUNDS):
                for blocked in (False, True):
                    set_blocks(blocked)
                    before = snapshot()
                    result = wrk(op, script, conns, DURATION, token, extra_env)
                    cpu = delta(before, snapshot())
                    if result:
                        # Ticks of CPU per request, in milliseconds.
                        result["service_cpu_ms"] = 1000 * cpu["service"] / TICK / max(1, result["requests"])
                        result["pg_cpu_ms"] = 1000 * cpu["postgres"] / TICK / max(1, result["requests"])
                    runs[blocked].append(result)
                    log(json.dumps({"op": op, "conns": conns, "blocks": BLOCKS if blocked else 0, "result": result}))
            set_blocks(False)
            rows.append({"op": op, "description": description, "conns": conns, "none": runs[False], "blocked": runs[True]})
    return authors, rows


def render_blocks(r):
    out = []
    w = out.append
    w(f"# Blocks ({r['mode']}): {BLOCKS} blocks against none, {r['started']}\n")
    w(f"benchseed blocked the {BLOCKS} busiest authors of the tenant (their notes: {r['blocked_notes']} of "
      f"{E['BENCH_NOTES']}), and unblocked them, {BLOCK_ROUNDS} times per concurrency, each run {DURATION} s; "
      "the figures are the means of the rounds. Ratios are blocked ÷ none (req/s: above 0.83 is within 1.2 x; "
      "latency and CPU per request: below 1.2).\n")
    w("| read | conns | req/s none | req/s blocked | ratio | p50 ms none / blocked | p99 ms none / blocked | "
      "PostgreSQL CPU ms/req none / blocked | service CPU ms/req none / blocked |")
    w("|---|---:|---:|---:|---:|---|---|---|---|")
    for row in r["block_rows"]:
        def m(runs, key):
            values = [x[key] for x in runs if x and x.get(key) is not None]
            return sum(values) / len(values) if values else None
        none_rps, blocked_rps = m(row["none"], "rps"), m(row["blocked"], "rps")
        ratio = blocked_rps / none_rps if none_rps and blocked_rps else None
        pair = lambda key, digits=2: f"{fmt(m(row['none'], key), digits)} / {fmt(m(row['blocked'], key), digits)}"
        w(f"| {row['description']} | {row['conns']} | {fmt(none_rps)} | {fmt(blocked_rps)} | {fmt(ratio, 2)} | "
          f"{pair('p50_ms')} | {pair('p99_ms')} | {pair('pg_cpu_ms', 3)} | {pair('service_cpu_ms', 3)} |")
    w("")
    return "\n".join(out)


def mean_of(values):
    return statistics.mean(values) if values else None


# ---- the run ----------------------------------------------------------------

def main():
    results = {"mode": MODE, "started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    status, body = http("POST", SERVICE_URL + "/v1/auth/login", {"username": "benchseed", "password": E["BENCH_PASSWORD"]},
                        {"X-Tenant": "bench"})
    assert status == 200, (status, body)
    token = json.loads(body)["access_token"]
    note_min, note_max = psql("SELECT min(n.id), max(n.id) FROM notes n JOIN tenants t ON t.id = n.tenant_id "
                              "WHERE t.slug = 'bench'").split("|")
    extra_env = {"BENCH_NOTE_MIN": note_min, "BENCH_NOTE_MAX": note_max, "BENCH_USERS": E["BENCH_USERS"]}

    log("== capturing the service's SQL")
    capture_sql.capture(psql=psql, http=http, service_url=SERVICE_URL, token=token,
                        log_path=os.path.join(PG_DIRS[0], "postgres.log"),
                        out_dir=os.path.join(BENCH, "pgbench"),
                        note_id=(int(note_min) + int(note_max)) // 2, note_range=(int(note_min), int(note_max)))

    time.sleep(1)
    results["rss_idle_kb"] = status_kb("VmRSS")
    results["hwm_before_kb"] = status_kb("VmHWM")
    can_reset = reset_peak_rss()
    rows = []
    peer_rows = []
    plain_ids = psql("SELECT t.id, u.id FROM tenants t JOIN users u ON u.tenant_id = t.id "
                     "WHERE t.slug = 'bench' AND u.username = 'benchseed'").split("|")
    log("== the plain scripts' answers against ours")
    # A public note, so the service answers it (10% of the generated notes are private).
    public_id = int(psql(f"SELECT min(id) FROM notes WHERE tenant_id = {plain_ids[0]} AND visibility = 'public' "
                         f"AND id >= {(int(note_min) + int(note_max)) // 2}"))
    results["plain_check"] = plain_check(token, plain_ids, public_id)
    if PEER_URL:
        log("== the peer's answers against ours")
        results["peer_check"] = peer_check(token)
    if BLOCKS:
        authors, results["block_rows"] = block_runs(token, extra_env)
        results["blocked_notes"] = psql(
            "SELECT count(*) FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id "
            f"WHERE u.username IN ({','.join(chr(39) + a + chr(39) for a in authors)})")
        results["finished"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        report = render_blocks(results)
        path = os.path.join(BENCH, "results", f"{datetime.now(timezone.utc).strftime('%Y-%m-%d')}-{MODE}-blocks.md")
        with open(path, "w") as f:
            f.write(report)
        with open(path[:-3] + ".json", "w") as f:
            json.dump(results, f, indent=1, default=str)
        print(report)
        log(f"written to {os.path.relpath(path, ROOT)}")
        return
    # BENCH_ONLY=nearest,create runs just those operations (for trying a change).
    only = [name for name in E.get("BENCH_ONLY", "").split(",") if name]
    for op, script, pg_scripts, description in OPS:
        if only and op not in only:
            continue
        conns_list = CONNS
        if op == "login":
            # No warm-up: abandoned logins keep hashing after wrk hangs up and would
            # fill the hash queue of the next run. 2 connections = LR_HASH_CONCURRENCY.
            conns_list = [os.cpu_count()] + CONNS
            # The machine's own scrypt rate first, while nothing else of ours hashes.
            log("== raw scrypt rate (N=2^17, r=8, p=1, one process per core)")
            results["scrypt_per_s"] = raw_scrypt_rate(DURATION)
            started = time.time()
            status, _ = http("POST", SERVICE_URL + "/v1/auth/login",
                             {"username": "kim.20", "password": E["BENCH_PASSWORD"]}, {"X-Tenant": "bench"})
            results["single_login"] = {"status": status, "seconds": time.time() - started}
            log(f"single login: HTTP {status} in {time.time() - started:.2f}s")
        else:
            log(f"== {op}: warm-up {WARMUP}s")
            wrk(op, script, CONNS[0], WARMUP, token, extra_env)
            if PEER_URL and op in PEER_OPS:
                log(f"== {op}: peer warm-up {WARMUP}s")
                wrk(op, script, CONNS[0], WARMUP, token, extra_env, url=PEER_URL)
        for conns in conns_list:
            if op == "login":
                time.sleep(4)  # let hashes of the previous run finish
            if can_reset:
                reset_peak_rss()
            before = snapshot()
            service = wrk(op, script, conns, DURATION, token, extra_env)
            cpu = delta(before, snapshot())
            peak = status_kb("VmHWM")
            bench = None
            pg_cpu = None
            if pg_scripts:
                before = snapshot()
                bench = pgbench(pg_scripts, conns, PG_DURATION, f"{op}-{conns}")
                time.sleep(0.5)  # let the backends exit and be reaped, so their CPU is counted
                pg_cpu = delta(before, snapshot())
            plain = plain_cpu = None
            if op in PLAIN:
                before = snapshot()
                plain = pgbench(pg_scripts, conns, PG_DURATION, f"{op}-{conns}-plain", plain=plain_ids)
                time.sleep(0.5)
                plain_cpu = delta(before, snapshot())
            row = {"op": op, "description": description, "conns": conns, "service": service, "pgbench": bench,
                   "cpu": cpu, "pg_cpu": pg_cpu, "peak_rss_kb": peak, "plain": plain, "plain_cpu": plain_cpu}
            rows.append(row)
            log(json.dumps({k: row[k] for k in ("op", "conns", "service", "pgbench")}))
            if PEER_URL and op in PEER_OPS:
                peer_rows.append(peer_runs(op, script, conns, token, extra_env, first_ours=(service, cpu)))
        if op == "nearest":
            # Profiled here, not after the logins: abandoned logins keep hashing for seconds.
            log("== perf profile under nearest-50 load")
            results["profile"], results["profile_error"] = perf_profile(token, extra_env, 5 if QUICK else 10)
    results["rows"] = rows
    if PEER_URL:
        results["peer_rows"] = peer_rows
        results["peer_rss_end_kb"] = status_kb("VmRSS", PEER_PID)
        results["peer_hwm_end_kb"] = status_kb("VmHWM", PEER_PID)
    results["rss_end_kb"] = status_kb("VmRSS")
    results["hwm_end_kb"] = status_kb("VmHWM")
    results["peak_reset_supported"] = can_reset

    results["finished"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results["elapsed_s"] = time.time() - float(E["BENCH_START"])

    report = render(results)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    suffix = ("-partial" if only else "") + ("-peers" if PEER_URL else "") + ("-citus" if E.get("BENCH_CITUS") else "")
    path = os.path.join(BENCH, "results", f"{datetime.now(timezone.utc).strftime('%Y-%m-%d')}-{MODE}{suffix}.md")
    with open(path, "w") as f:
        f.write(report)
    with open(path[:-3] + ".json", "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(report)
    log(f"written to {os.path.relpath(path, ROOT)}")


def fmt(value, digits=1):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def render(r):
    out = []
    w = out.append
    w(f"# Benchmark, {r['mode']} run{', on Citus (a coordinator and two workers)' if E.get('BENCH_CITUS') else ''}, {r['started']}\n")
    w(f"Machine: {os.cpu_count()} cores, shared with other engineers' builds and tests during the run, so every "
      f"figure is noisy (see the 'machine busy' column: cores busy in total, including work that is not ours). "
      f"Data: {int(E['BENCH_NOTES']):,} notes by {int(E['BENCH_USERS']):,} users in tenant bench, "
      f"{int(E['BENCH_NOTES2']):,} notes in bench2, 2,000 places; loaded in {E['BENCH_LOAD_SECONDS']} s "
      f"(generate.sql incl. VACUUM ANALYZE). Release build step: {E['BENCH_BUILD_SECONDS']} s. "
      f"Runs: {DURATION} s after a {WARMUP} s warm-up, wrk 2 threads through nginx (1 worker, keepalive upstream) "
      f"to the service (LR_DB_POOL_SIZE={E.get('BENCH_POOL_SIZE', '16')}, LR_LOG_LEVEL=warning); pgbench {PG_DURATION} s, "
      f"2 threads, same connections, the service's captured SQL (bench/pgbench/; -M prepared, or -M extended where "
      f"the service runs the query unprepared for per-query plans: search). Whole run: "
      f"{r['elapsed_s'] / 60:.1f} min.\n")
    w("## Service vs PostgreSQL alone\n")
    w("| operation | conns | service req/s | p50 ms | p99 ms | non-2xx | pgbench tps | pg p50 ms | pg p99 ms | "
      "service / pgbench | p99 / pg p99 |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in r["rows"]:
        s, p = row["service"] or {}, row["pgbench"] or {}
        ratio = s.get("rps") / p["tps"] if s.get("rps") and p.get("tps") else None
        pr = s.get("p99_ms") / p["p99_ms"] if s.get("p99_ms") and p.get("p99_ms") else None
        if row["op"] == "login" and s.get("requests"):
            ok = (s["requests"] - s.get("non2xx", 0)) / DURATION
            ratio = ok / r["scrypt_per_s"]
        w(f"| {row['description']} | {row['conns']} | {fmt(s.get('rps'))} | {fmt(s.get('p50_ms'), 2)} | "
          f"{fmt(s.get('p99_ms'), 2)} | {int(s.get('non2xx', 0)) + int(s.get('socket_errors', 0))} | "
          f"{fmt(p.get('tps')) if p else ('raw scrypt ' + fmt(r['scrypt_per_s'], 2) + '/s' if row['op'] == 'login' else '–')} | "
          f"{fmt(p.get('p50_ms'), 2)} | {fmt(p.get('p99_ms'), 2)} | {fmt(ratio, 2)} | {fmt(pr, 2)} |")
    if r.get("single_login"):
        w(f"\nOne login alone before the login runs: HTTP {r['single_login']['status']} in "
          f"{r['single_login']['seconds']:.2f} s.")
    w("\nLogin's ratio is successful (2xx) logins per second against the raw scrypt rate of this machine (Python's hashlib.scrypt, OpenSSL, one "
      "process per core, same N, r, p), not pgbench.\n")
    w("## CPU per request (ms of CPU time per service request, from /proc utime+stime deltas)\n")
    w("| operation | conns | service | nginx | PostgreSQL | wrk | machine busy (cores) | pgbench run: PostgreSQL ms/tx |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in r["rows"]:
        s, c = row["service"] or {}, row["cpu"]
        n = s.get("requests") or 0
        per = lambda k: (c[k] / TICK * 1000 / n) if n else None  # noqa: E731
        pgc = None
        if row["pg_cpu"] and row["pgbench"]:
            tx = row["pgbench"]["tps"] * PG_DURATION
            pgc = row["pg_cpu"]["postgres"] / TICK * 1000 / tx if tx else None
        w(f"| {row['description']} | {row['conns']} | {fmt(per('service'), 3)} | {fmt(per('nginx'), 3)} | "
          f"{fmt(per('postgres'), 3)} | {fmt(per('driver'), 3)} | {fmt(c['busy_cores'], 2)} | {fmt(pgc, 3)} |")
    if any(row.get("plain") for row in r["rows"]):
        render_plain(r, w)
    if r.get("peer_rows") is not None:
        render_peers(r, w)
    w("\n## Service memory\n")
    w(f"- idle, after start, signup, capture requests: VmRSS {r['rss_idle_kb'] / 1024:.1f} MiB "
      f"(VmHWM so far {r['hwm_before_kb'] / 1024:.1f} MiB, includes one signup's 128 MiB scrypt)")
    w(f"- after all runs: VmRSS {r['rss_end_kb'] / 1024:.1f} MiB")
    if r["peak_reset_supported"]:
        w("- peak RSS (VmHWM, reset before each run via /proc/PID/clear_refs):\n")
        w("| operation | " + " | ".join(f"{c} conns" for c in CONNS) + " |")
        w("|---|" + "---:|" * len(CONNS))
        for op, _, _, description in OPS:
            cells = [fmt(row["peak_rss_kb"] / 1024) + " MiB" for row in r["rows"] if row["op"] == op and row["conns"] in CONNS]
            w(f"| {description} | " + " | ".join(cells) + " |")
    w("")
    w("## Profile: the service under nearest-50 load (perf, cpu-clock, 32 connections)\n")
    if r.get("profile"):
        w("By shared object:\n\n```")
        w("\n".join(r["profile"]["dso"][:15]))
        w("```\n\nTop functions (self time):\n\n```")
        w("\n".join(r["profile"]["symbol"][:15]))
        w("```")
    else:
        w(f"Not available: {r.get('profile_error')}")
    w("")
    return "\n".join(out) + "\n"


def render_plain(r, w):
    w("\n## PostgreSQL time against the plain query (bench/plain/)\n")
    w("The same answer as one plain statement (no token lookup, no row-level security, no tenant setting, no "
      "transaction; the tables' owner, -M prepared), with the captured script's variable draws, at the same "
      "connections right after the captured script. PostgreSQL ms are CPU time of all backends per request or "
      "transaction. Target (issue 22): the service's at or under 1.15 x the plain query's.\n")
    check = r.get("plain_check") or {}
    if check:
        w("Same rows as the service's answer to the captured request: " + ", ".join(
            f"{name} {'yes' if c['same'] else 'NO'} ({c['rows']} rows)" for name, c in check.items()) + ".\n")
    w("| operation | conns | service: PostgreSQL ms/req | captured SQL: ms/tx | plain: ms/tx | plain tps | "
      "service / plain | captured / plain |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in r["rows"]:
        if not row.get("plain"):
            continue
        n = (row["service"] or {}).get("requests") or 0
        service = row["cpu"]["postgres"] / TICK * 1000 / n if n else None
        per_tx = lambda bench, cpu: (cpu["postgres"] / TICK * 1000 / (bench["tps"] * PG_DURATION)  # noqa: E731
                                     if bench and cpu and bench.get("tps") else None)
        captured, plain = per_tx(row["pgbench"], row["pg_cpu"]), per_tx(row["plain"], row["plain_cpu"])
        ratio = lambda a, b: a / b if a and b else None  # noqa: E731
        w(f"| {row['description']} | {row['conns']} | {fmt(service, 3)} | {fmt(captured, 3)} | {fmt(plain, 3)} | "
          f"{fmt(row['plain'].get('tps'))} | {fmt(ratio(service, plain), 2)} | {fmt(ratio(captured, plain), 2)} |")


def render_peers(r, w):
    pg = {(row["op"], row["conns"]): row["pgbench"] or {} for row in r["rows"]}
    w(f"\n## Peer: Vapor 4 + postgres-nio (bench/peers/vapor-peer)\n")
    w(f"The same requests (wrk scripts, through the same nginx, its own server block) against a plain Vapor app "
      f"serving GET /v1/notes?near= and POST /v1/notes from the same tables with the plainest SQL: no authentication, "
      f"no row-level security (it connects as the tables' owner), no fair shares, no idempotency keys, no ETags, no "
      f"event fan-out (the notes table's own event triggers still run on its inserts). Pool: "
      f"LR_DB_POOL_SIZE={E.get('BENCH_POOL_SIZE', '16')}, release build (build step: {E.get('BENCH_PEER_BUILD_SECONDS', '?')} s), "
      f"logging at warning. At each concurrency ours and the peer ran in turn, {r['peer_rows'][0]['rounds'] if r['peer_rows'] else '?'} "
      f"round(s) each (ours first: its first run is the main table's); req/s and p50/p99 are the means of a side's runs, "
      f"CPU ms/request its process's CPU (utime+stime) over all its runs' requests. pgbench: the main table's, "
      f"running our captured SQL (token lookup, tenant setting and all).\n")
    c = r.get("peer_check")
    if c:
        n = len(c["nearest"])
        w(f"Same answers (checked before the runs, straight to each process, ours signed in as benchseed, whose 11 private "
          f"notes (the generator's) are not among the 50 nearest at these points): nearest 50 within 10 km at {n} points: the same ids in the same order at "
          f"{sum(x['same_ids'] for x in c['nearest'])}/{n}, the same set at {sum(x['same_id_set'] for x in c['nearest'])}/{n}, "
          f"items identical as JSON at {sum(x['same_bytes'] for x in c['nearest'])}/{n} (is_mine aside: ours says true on "
          f"benchseed's own public note, the capture's create at London's centre); one create each: HTTP "
          f"{'/'.join(map(str, c['create_status']))}, the same keys and the same values "
          f"(but id and timestamps): {'yes' if c['same_create'] else 'NO'}.\n")
    w("| operation | conns | ours req/s | peer req/s | ours / peer | pgbench tps | ours p50 ms | peer p50 ms | "
      "ours p99 ms | peer p99 ms | ours CPU ms/req | peer CPU ms/req | CPU ours / peer | PostgreSQL ms/req ours / peer | errors ours / peer |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in r["peer_rows"]:
        o, p = row["ours"], row["peer"]
        ratio = lambda a, b: a / b if a and b else None  # noqa: E731
        w(f"| {row['op']} | {row['conns']} | {fmt(o['rps'])} | {fmt(p['rps'])} | {fmt(ratio(o['rps'], p['rps']), 2)} | "
          f"{fmt(pg.get((row['op'], row['conns']), {}).get('tps'))} | {fmt(o['p50_ms'], 2)} | {fmt(p['p50_ms'], 2)} | "
          f"{fmt(o['p99_ms'], 2)} | {fmt(p['p99_ms'], 2)} | {fmt(o['cpu_ms_per_req'], 3)} | {fmt(p['cpu_ms_per_req'], 3)} | "
          f"{fmt(ratio(o['cpu_ms_per_req'], p['cpu_ms_per_req']), 2)} | "
          f"{fmt(o['postgres_ms_per_req'], 3)} / {fmt(p['postgres_ms_per_req'], 3)} | {o['errors']} / {p['errors']} |")
    w("\nPer run, req/s (ours, peer in the order they ran):\n")
    for row in r["peer_rows"]:
        runs = []
        for i in range(max(len(row["ours"]["runs"]), len(row["peer"]["runs"]))):
            for side in ("ours", "peer"):
                if i < len(row[side]["runs"]):
                    runs.append(f"{side} {fmt((row[side]['runs'][i] or {}).get('rps'))}")
        w(f"- {row['op']}, {row['conns']} conns: " + ", ".join(runs))
    if r.get("peer_rss_end_kb"):
        w(f"\nPeer memory after all runs: VmRSS {r['peer_rss_end_kb'] / 1024:.1f} MiB, "
          f"VmHWM {r['peer_hwm_end_kb'] / 1024:.1f} MiB.")


if __name__ == "__main__":
    main()
