#!/usr/bin/env bash
# bench/photos.sh (`make bench-photos`): photo uploads and variant serving, on the real
# stack: a release build, its own PostgreSQL, nginx from deploy/nginx (so the variant path
# is the deployed one: a replica decides, nginx sends from its cache).
#
#   uploads   12-megapixel camera-like JPEG and HEIC through nginx, one and two at a time
#             (LR_PHOTO_WORKERS=2): photos per second, the service's own CPU, the workers'
#             CPU and PostgreSQL's per photo, the service's peak RSS, a worker's peak RSS.
#   serving   one variant (thumb and display) by wrk at 8 and 32 connections: through nginx
#             as deployed (X-Accel-Redirect, bytes from nginx's cache), through nginx with the
#             replica sending the bytes itself (the same location without the header), and
#             the same bytes as a static file from nginx (the floor).
#
# The report goes to bench/results/<date>-photos.md and is printed. BENCH_BIN=path uses that
# binary instead of building; BENCH_KEEP=1 keeps the temporary directory;
# BENCH_PHOTOS=n uploads n photos of each format per concurrency (12); BENCH_SECONDS=s runs
# wrk that long per figure (10).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

scripts/install-deps.sh wrk nginx libvips-tools bubblewrap libimage-exiftool-perl curl
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

WORK=$(mktemp -d /tmp/lr-bench-photos.XXXXXX)
chmod 755 "$WORK"
SERVICE_PID=""
cleanup() {
    [ -n "$SERVICE_PID" ] && kill "$SERVICE_PID" 2>/dev/null || true
    [ -f "$WORK/nginx/nginx.pid" ] && kill "$(cat "$WORK/nginx/nginx.pid")" 2>/dev/null || true
    scripts/postgres.sh stop "$WORK/pg" || true
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

echo "== PostgreSQL ($WORK/pg)"
scripts/postgres.sh start "$WORK/pg" "$(free_port)"
eval "$(scripts/postgres.sh env "$WORK/pg" | sed -E 's/^([A-Z_]+)=(.*)$/export \1='"'"'\2'"'"'/')"

echo "== release build"
if [ -n "${BENCH_BIN:-}" ]; then BIN=$BENCH_BIN; else
    swift build -c release --product landmark-remark 2>&1 | tail -3
    BIN="$(swift build -c release --show-bin-path)/landmark-remark"
fi
"$BIN" migrate >/dev/null
"$BIN" tenant create bench --name "Bench" --if-missing >/dev/null
"$BIN" tenant create bench2 --name "Bench 2" --if-missing >/dev/null

echo "== photos: 12 megapixels (4000×3000), camera-like, JPEG and HEIC"
bench/photos/make-camera-photos.sh "$WORK/photos"
ls -l "$WORK/photos"/camera.*

SERVICE_PORT=$(free_port)
NGINX_PORT=$(free_port)
PLAIN_PORT=$(free_port)
mkdir -p "$WORK/jobs"
LR_PORT=$SERVICE_PORT LR_LOG_LEVEL=warning LR_TRUSTED_PROXIES=127.0.0.1 LR_ACCESS_TOKEN_TTL_SECONDS=86400 \
LR_DB_SHARE_PER_USER_PERCENT=100 LR_DB_SHARE_PER_TENANT_PERCENT=100 \
LR_PHOTOS_PER_NOTE=100 LR_PHOTO_BYTES_PER_USER=1000000000000 LR_PHOTO_BYTES_PER_TENANT=1000000000000 \
LR_PHOTO_WORKERS=2 LR_PHOTO_WORK_DIR="$WORK/jobs" \
    "$BIN" serve >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$SERVICE_PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$SERVICE_PORT/readyz" >/dev/null || { echo "service did not start"; cat "$WORK/service.log"; exit 1; }

echo "== nginx: deploy/nginx as deployed (port $NGINX_PORT), and a plain proxy and static files (port $PLAIN_PORT)"
RUN=$WORK/nginx; export RUN
mkdir -p "$RUN/conf.d" "$RUN/snippets" "$RUN/static"
cp deploy/nginx/snippets/*.conf "$RUN/snippets/"
export LR_NGINX_LISTEN=127.0.0.1:$NGINX_PORT LR_NGINX_UPSTREAM="server 127.0.0.1:$SERVICE_PORT;" \
    LR_NGINX_WEB_ROOT=$ROOT/web LR_NGINX_TILE_SOURCE=""
python3 - deploy/nginx/conf.d/landmark-remark.conf.template >"$RUN/conf.d/landmark-remark.conf" <<'PY'
import os, re, sys
names = ["LR_NGINX_LISTEN", "LR_NGINX_UPSTREAM", "LR_NGINX_WEB_ROOT", "LR_NGINX_TILE_SOURCE"]
text = open(sys.argv[1]).read()
text = re.sub(r"\$\{(" + "|".join(names) + r")\}", lambda m: os.environ[m.group(1)], text)
run = os.environ["RUN"]
sys.stdout.write(text.replace("/var/log/nginx/", run + "/").replace("/var/cache/nginx/", run + "/"))
PY
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat >"$RUN/nginx.conf" <<EOF
$USER_LINE
worker_processes 1;
pid $RUN/nginx.pid;
error_log $RUN/error.log warn;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    client_body_temp_path $RUN/client_body;
    proxy_temp_path $RUN/proxy;
    fastcgi_temp_path $RUN/fastcgi;
    uwsgi_temp_path $RUN/uwsgi;
    scgi_temp_path $RUN/scgi;
    access_log off;
    include conf.d/*.conf;
    # The comparisons: the replica sending the bytes itself (no X-LR-Photo-Accel), and the
    # same bytes as files.
    server {
        listen 127.0.0.1:$PLAIN_PORT;
        access_log off;
        location /v1/ {
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass http://landmark_remark;
        }
        location /static/ { root $RUN; etag on; }
    }
}
EOF
sed -i 's#access_log [^;]*landmark_remark;#access_log off;#' "$RUN/conf.d/landmark-remark.conf"
nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/error.log" -t -q
nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/error.log"

mkdir -p bench/results
OUT=bench/results/$(date +%F)-photos.md
BENCH_DIR=$ROOT/bench python3 bench/photos/measure.py \
    --service-pid "$SERVICE_PID" --edge "http://127.0.0.1:$NGINX_PORT" --plain "http://127.0.0.1:$PLAIN_PORT" \
    --photos "$WORK/photos" --static "$RUN/static" --pg-dir "$WORK/pg" \
    --count "${BENCH_PHOTOS:-12}" --seconds "${BENCH_SECONDS:-10}" --out "$OUT"
echo "== report: $OUT"
