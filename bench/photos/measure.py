#!/usr/bin/env python3
"""The photo benchmark's measurements (bench/photos.sh starts the stack, then this).

Uploads: photos per second, and per photo the service's own CPU (utime+stime of its process),
the workers' CPU (cutime+cstime: the sandboxed processes the service reaped), PostgreSQL's
CPU (its backends' utime+stime), from /proc before and after each run; the service's peak RSS
(VmHWM), and a worker's peak RSS, sampled every 10 ms as the sum over each worker's process
tree (prlimit → bwrap → sh → the vips tool), the largest seen.

Serving: wrk against one variant through nginx as deployed, through nginx with the replica
sending the bytes, and as a static file from nginx: requests per second, p50 and p99, and the
service's CPU per request."""
import argparse
import http.client
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
import uuid

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def stat(pid):
    """(utime+stime, cutime+cstime) of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the command: state is field 3, so utime (14) is at index 11.
    return (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def postmaster(pg_dir):
    for root, _, files in os.walk(pg_dir):
        if "postmaster.pid" in files:
            with open(os.path.join(root, "postmaster.pid")) as f:
                return int(f.readline())
    raise SystemExit(f"no postmaster.pid under {pg_dir}")


def processes():
    """pid → (ppid, rss bytes) of every process now."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/statm") as f:
                rss = int(f.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
        table[int(name)] = (ppid, rss)
    return table


def postgres_cpu(master):
    total = 0.0
    for pid, (ppid, _) in processes().items():
        if ppid == master:
            try:
                total += stat(pid)[0]
            except OSError:
                pass
    return total


class WorkerSampler(threading.Thread):
    """The largest RSS of one worker's process tree (children of the service, with their
    descendants), sampled every 10 ms."""

    def __init__(self, service):
        super().__init__(daemon=True)
        self.service, self.peak, self.samples, self.running = service, 0, 0, True

    def run(self):
        while self.running:
            table = processes()
            children = {}
            for pid, (ppid, _) in table.items():
                children.setdefault(ppid, []).append(pid)
            for root in children.get(self.service, []):
                total, stack = 0, [root]
                while stack:
                    pid = stack.pop()
                    total += table.get(pid, (0, 0))[1]
                    stack.extend(children.get(pid, []))
                self.peak = max(self.peak, total)
            self.samples += 1
            time.sleep(0.01)


def request(base, method, path, body=None, headers=None):
    url = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def signup(edge, name, tenant):
    status_, _, data = request(edge, "POST", "/v1/auth/signup",
                               json.dumps({"username": name, "password": "bench photos harbour 2026"}),
                               {"X-Tenant": tenant, "Content-Type": "application/json"})
    assert status_ == 201, data
    token = json.loads(data)["access_token"]
    status_, _, data = request(edge, "POST", "/v1/notes",
                               json.dumps({"body": "The view", "lat": -33.8568, "lng": 151.2153}),
                               {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert status_ == 201, data
    return token, json.loads(data)["id"]


def uploads(args, users, name, data, concurrency):
    """`args.count` uploads of `data`, `concurrency` at once (one user each)."""
    master = postmaster(args.pg_dir)
    before, pg_before = stat(args.service_pid), postgres_cpu(master)
    sampler = WorkerSampler(args.service_pid)
    sampler.start()
    latencies, photos, failures = [], [], []
    lock = threading.Lock()

    def client(index):
        token, note = users[index]
        for _ in range(args.count // concurrency):
            started = time.monotonic()
            status_, _, body = request(args.edge, "POST", f"/v1/notes/{note}/photos", data, {
                "Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream",
                "Idempotency-Key": str(uuid.uuid4())})
            with lock:
                latencies.append(time.monotonic() - started)
                (photos if status_ == 201 else failures).append(json.loads(body) if status_ == 201 else (status_, body[:200]))

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    sampler.running = False
    sampler.join()
    after, pg_after = stat(args.service_pid), postgres_cpu(master)
    if failures:
        raise SystemExit(f"{name}: {len(failures)} uploads failed: {failures[:3]}")
    n = len(photos)
    latencies.sort()
    return {
        "format": name, "concurrency": concurrency, "photos": n, "seconds": round(wall, 2),
        "photos_per_second": round(n / wall, 2),
        "p50_s": round(latencies[len(latencies) // 2], 2), "max_s": round(latencies[-1], 2),
        "service_cpu_ms": round((after[0] - before[0]) / n * 1000, 1),
        "worker_cpu_ms": round((after[1] - before[1]) / n * 1000, 1),
        "postgres_cpu_ms": round((pg_after - pg_before) / n * 1000, 1),
        "worker_peak_rss_mb": round(sampler.peak / 1e6, 1), "samples": sampler.samples,
        "last": photos[-1],
    }


def encodings(photos):
    """JPEG (as the service writes its variants: quality 82, strip, optimised Huffman tables)
    against WebP at the 1280-pixel display size of the bench's photo: bytes, encoding CPU
    (the encoder's own, from RUSAGE_CHILDREN) and PSNR against the uncompressed reference."""
    import math
    import resource
    work = os.path.join(photos, "encodings")
    os.makedirs(work, exist_ok=True)
    reference = os.path.join(work, "reference.v")
    env = dict(os.environ, VIPS_CONCURRENCY="1")
    vips = lambda *a: subprocess.run(list(a), check=True, capture_output=True, text=True, env=env).stdout
    vips("vipsthumbnail", os.path.join(photos, "camera.jpg"), "--size", "1280x1280>", "--export-profile", "srgb", "-o", reference)
    results = []
    for label, name, options in (
        ("JPEG Q 82 (the service's)", "out.jpg", "[Q=82,strip,optimize-coding]"),
        ("WebP Q 75", "out.webp", "[Q=75,strip]"),
        ("WebP Q 82", "out.webp", "[Q=82,strip]"),
        ("WebP Q 90", "out.webp", "[Q=90,strip]"),
    ):
        target = os.path.join(work, name)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(5):
            vips("vips", "copy", reference, target + options)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / 5
        decoded, difference, squared = (os.path.join(work, n) for n in ("decoded.v", "difference.v", "squared.v"))
        vips("vips", "copy", target, decoded)
        vips("vips", "subtract", reference, decoded, difference)
        vips("vips", "multiply", difference, difference, squared)
        mse = float(vips("vips", "avg", squared))
        results.append({"encoding": label, "bytes": os.path.getsize(target), "encode_cpu_ms": round(cpu * 1000, 1),
                        "psnr_db": round(10 * math.log10(255 ** 2 / mse), 2) if mse else None})
        print(f"encoding {label}: {results[-1]}", flush=True)
    return results


WRK_LATENCY = re.compile(r"^\s+(50|99)(?:\.000)?%\s+([\d.]+)(us|ms|s)\s*$", re.M)


def wrk(args, url, token, connections):
    before = stat(args.service_pid)[0]
    command = ["wrk", "-t2", f"-c{connections}", f"-d{args.seconds}s", "--latency", url]
    if token:
        command[1:1] = ["-H", f"Authorization: Bearer {token}"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    after = stat(args.service_pid)[0]
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    total = int(re.search(r"(\d+) requests in", output).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if bad or "Socket errors" in output:
        raise SystemExit(f"wrk saw errors against {url}:\n{output}")
    unit = {"us": 0.001, "ms": 1, "s": 1000}
    latency = {p: float(v) * unit[u] for p, v, u in WRK_LATENCY.findall(output)}
    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", output)
    return {"rps": round(rate), "p50_ms": round(latency["50"], 2), "p99_ms": round(latency["99"], 2),
            "service_cpu_us_per_request": round((after - before) / total * 1e6, 1),
            "transfer": transfer.group(1) + transfer.group(2) + "/s"}


def main():
    parser = argparse.ArgumentParser()
    for name in ("edge", "plain", "photos", "static", "pg-dir", "out"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--service-pid", type=int, required=True)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()

    # Two at once are two tenants': one tenant has all workers but one (LR_PHOTO_WORKERS - 1,
    # so another tenant always finds one free), so with 2 workers its uploads go one by one.
    formats = encodings(args.photos)
    users = [signup(args.edge, "photographer", "bench"), signup(args.edge, "photographer", "bench2")]
    rss_before = status(args.service_pid, "VmRSS")
    runs = []
    for name, file in (("JPEG", "camera.jpg"), ("HEIC", "camera.heic")):
        data = open(os.path.join(args.photos, file), "rb").read()
        for concurrency in (1, 2):
            run = uploads(args, users, name, data, concurrency)
            run["bytes"] = len(data)
            runs.append(run)
            print(f"upload {name} ×{concurrency}: {run['photos_per_second']} photos/s, "
                  f"service {run['service_cpu_ms']} ms, workers {run['worker_cpu_ms']} ms, "
                  f"PostgreSQL {run['postgres_cpu_ms']} ms CPU per photo; a worker's peak {run['worker_peak_rss_mb']} MB", flush=True)
    rss_peak, rss_after = status(args.service_pid, "VmHWM"), status(args.service_pid, "VmRSS")

    # One photo's variants, served.
    token = users[0][0]
    photo = runs[0]["last"]
    serving = []
    for variant in ("thumb", "display"):
        path = urllib.parse.urlparse(photo["variants"][variant]["url"]).path
        status_, headers, data = request(args.edge, "GET", path, headers={"Authorization": f"Bearer {token}"})
        status_, headers, data = request(args.edge, "GET", path, headers={"Authorization": f"Bearer {token}"})
        assert status_ == 200 and headers.get("X-LR-Photo-Cache") == "HIT", (status_, headers)
        with open(os.path.join(args.static, f"{variant}.jpg"), "wb") as f:
            f.write(data)
        targets = (
            ("nginx, as deployed (the replica decides, nginx sends from its cache)", args.edge + path, token),
            ("nginx, the replica sending the bytes", args.plain + path, token),
            ("nginx, a static file of the same bytes (floor)", args.plain + f"/static/{variant}.jpg", None),
        )
        for label, url, bearer in targets:
            for connections in (8, 32):
                figures = wrk(args, url, bearer, connections)
                serving.append({"variant": variant, "bytes": len(data), "target": label, "connections": connections, **figures})
                print(f"serve {variant} ({len(data)} B) c{connections} {label}: {figures}", flush=True)

    revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"# Photos: uploads and serving ({time.strftime('%Y-%m-%d')}, {revision})", "",
        f"`bench/photos.sh` on this machine ({os.cpu_count()} cores, shared): release build, "
        "LR_PHOTO_WORKERS=2, bubblewrap sandbox, PostgreSQL with default settings, nginx from "
        "deploy/nginx with 1 worker. Photos: 4000×3000 camera-like, EXIF orientation 6 and GPS "
        "(`bench/photos/make-camera-photos.sh`), "
        + ", ".join(f"{r['format']} {r['bytes'] / 1e6:.2f} MB" for r in runs if r["concurrency"] == 1) + ".", "",
        "## Uploads (through nginx; each photo a new upload to a note)", "",
        "| format | at once | photos | photos/s | p50 s | max s | service CPU ms/photo | workers' CPU ms/photo | PostgreSQL CPU ms/photo | a worker's peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(f"| {r['format']} | {r['concurrency']} | {r['photos']} | {r['photos_per_second']} | {r['p50_s']} | {r['max_s']} | "
                     f"{r['service_cpu_ms']} | {r['worker_cpu_ms']} | {r['postgres_cpu_ms']} | {r['worker_peak_rss_mb']} |")
    lines += [
        "", "Two at once are two tenants' users: one tenant may use all workers but one, so with "
        "LR_PHOTO_WORKERS=2 one tenant's uploads are decoded one by one (another tenant always finds a worker).", "",
        f"The service's RSS: {rss_before / 1e6:.1f} MB before the uploads, {rss_after / 1e6:.1f} MB after, "
        f"peak (VmHWM) {rss_peak / 1e6:.1f} MB. A worker's peak is sampled every 10 ms (the sum over its process tree).", "",
        "## JPEG or WebP (the display variant, 1280 pixels, of the same photo)", "",
        "Encoded from the same uncompressed reference with libvips' tools, one thread; PSNR against that reference.", "",
        "| encoding | bytes | encode CPU ms | PSNR dB |", "|---|---:|---:|---:|",
        *[f"| {f['encoding']} | {f['bytes']} | {f['encode_cpu_ms']} | {f['psnr_db']} |" for f in formats],
        "",
        "## Serving one variant (wrk, 2 threads, " + f"{args.seconds} s per figure)", "",
        "| variant | bytes | path | connections | req/s | p50 ms | p99 ms | service CPU µs/request | transfer |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for s in serving:
        lines.append(f"| {s['variant']} | {s['bytes']} | {s['target']} | {s['connections']} | {s['rps']} | {s['p50_ms']} | "
                     f"{s['p99_ms']} | {s['service_cpu_us_per_request']} | {s['transfer']} |")
    lines += ["", "Ratios (req/s of the deployed path ÷ the static floor, and ÷ the replica sending the bytes):", ""]
    for variant in ("thumb", "display"):
        for connections in (8, 32):
            row = {s["target"][:20]: s["rps"] for s in serving if s["variant"] == variant and s["connections"] == connections}
            deployed, sending, floor = row["nginx, as deployed ("], row["nginx, the replica s"], row["nginx, a static file"]
            lines.append(f"- {variant}, {connections} connections: {deployed / floor:.2f} of the floor, "
                         f"{deployed / sending:.2f}× the replica sending the bytes")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(args.out.replace(".md", ".json"), "w") as f:
        json.dump({"encodings": formats, "uploads": [{k: v for k, v in r.items() if k != "last"} for r in runs], "serving": serving,
                   "service_rss_before": rss_before, "service_rss_after": rss_after, "service_rss_peak": rss_peak}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
