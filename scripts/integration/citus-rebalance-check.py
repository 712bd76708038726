#!/usr/bin/env python3
"""Adding a worker and rebalancing shards without downtime (docs/operations.md, "Running on
Citus", step 5), once, on the cluster of scripts/test-citus.sh.

Usage: citus-rebalance-check.py CLUSTER_DIR BINARY

The service serves from the coordinator while writers create and edit notes for several
tenants. A third worker joins and `citus_rebalance_start()` moves shards onto it. Passes when
every request answered 2xx, every note written reads back as written, and the new worker
holds shards of every distributed table.
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

CLUSTER, BINARY = sys.argv[1], sys.argv[2]
TENANTS = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env():
    out = subprocess.run(["scripts/citus.sh", "env", CLUSTER], check=True, capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def coordinator_sql(sql):
    port = open(os.path.join(CLUSTER, "coordinator", "port")).read().strip()
    command = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", os.path.join(CLUSTER, "coordinator", "socket"),
               "-p", port, "-U", "postgres", "-d", "landmark_remark", "-c", sql]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--"] + command
    return subprocess.run(command, check=True, capture_output=True, text=True, cwd="/").stdout.strip()


def call(base, method, path, body=None, token=None, tenant=None):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    if tenant:
        request.add_header("X-Tenant", tenant)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            is_json = response.headers.get("Content-Type", "").startswith("application/json")
            return response.status, json.loads(raw) if is_json and raw else raw.decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def main():
    env = cluster_env()
    port = free_port()
    service_env = dict(os.environ, LR_HOST="127.0.0.1", LR_PORT=str(port), LR_DATABASE_URL=env["LR_DATABASE_URL"],
                       LR_MIGRATE_DATABASE_URL=env["LR_MIGRATE_DATABASE_URL"], LR_SCRYPT_LOG_N="4", LR_LOG_LEVEL="warning")
    service = subprocess.Popen([BINARY, "serve"], env=service_env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(CLUSTER, "service.log"), "w"))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if call(base, "GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise SystemExit("the service did not become ready")

        accounts = []
        for index in range(TENANTS):
            slug = f"rebalance-{index}-{port}"
            subprocess.run([BINARY, "tenant", "create", slug, "--name", slug], env=service_env, check=True, capture_output=True)
            status, body = call(base, "POST", "/v1/auth/signup", {"username": "mover", "password": "a sturdy passphrase"}, tenant=slug)
            assert status == 201, (status, body)
            accounts.append((slug, body["access_token"]))

        failures, written, stop = [], {slug: {} for slug, _ in accounts}, threading.Event()

        def writer(slug, token):
            count = 0
            while not stop.is_set():
                status, body = call(base, "POST", "/v1/notes", {"body": f"moving {count}", "lat": -33.8, "lng": 151.2}, token=token)
                if status != 201:
                    failures.append((slug, "create", status, body))
                    continue
                note = body["id"]
                written[slug][note] = f"moving {count}"
                if count % 3 == 0:
                    status, body = call(base, "PATCH", f"/v1/notes/{note}", {"body": f"moved {count}"}, token=token)
                    if status != 200:
                        failures.append((slug, "patch", status, body))
                    else:
                        written[slug][note] = f"moved {count}"
                count += 1

        threads = [threading.Thread(target=writer, args=account) for account in accounts]
        for thread in threads:
            thread.start()
        time.sleep(2)

        added = subprocess.run(["scripts/citus.sh", "add-worker", CLUSTER], check=True, capture_output=True, text=True).stdout.strip()
        new_port = added.rsplit(" ", 1)[-1]
        coordinator_sql("SELECT citus_rebalance_start()")
        deadline = time.time() + 300
        while time.time() < deadline:
            state = coordinator_sql("SELECT state FROM citus_rebalance_status() ORDER BY job_id DESC LIMIT 1")
            if state in ("finished", "failed", "cancelled"):
                break
            time.sleep(0.5)
        time.sleep(1)
        stop.set()
        for thread in threads:
            thread.join()

        assert state == "finished", f"rebalance ended {state}"
        moved = coordinator_sql(f"SELECT count(*) FROM citus_shards WHERE nodeport = {new_port}")
        tables = coordinator_sql(f"SELECT count(DISTINCT table_name) FROM citus_shards WHERE nodeport = {new_port} AND citus_table_type = 'distributed'")
        expected = coordinator_sql("SELECT count(*) FROM pg_dist_partition WHERE partmethod = 'h'")
        assert not failures, f"{len(failures)} requests failed during the rebalance, first: {failures[:3]}"
        assert int(moved) > 0 and tables == expected, f"the new worker holds {moved} shards of {tables} of {expected} tables"
        total = 0
        for slug, token in accounts:
            for note, body in written[slug].items():
                status, got = call(base, "GET", f"/v1/notes/{note}", token=token)
                assert status == 200 and got["body"] == body, (slug, note, status, got)
                total += 1
        print(f"rebalance: {moved} shards moved to worker port {new_port} while {total} notes were written; every request 2xx, every note reads back")
    finally:
        service.terminate()
        service.wait(timeout=30)


if __name__ == "__main__":
    main()
