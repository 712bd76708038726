#!/usr/bin/env bash
# `make run`: with nothing configured, installs what is missing, starts a local
# PostgreSQL under .data/, migrates, creates the demo tenant and serves on
# 127.0.0.1:8080, the web app at /. With LR_DATABASE_URL set, uses that database instead.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if [ -z "${LR_DATABASE_URL:-}" ]; then
    scripts/postgres.sh start
    while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env)
fi
export LR_MIGRATE_DATABASE_URL=${LR_MIGRATE_DATABASE_URL:-$LR_DATABASE_URL}

swift build --product landmark-remark
BIN=$(swift build --show-bin-path)/landmark-remark
"$BIN" migrate
"$BIN" tenant create demo --name "Demo" --if-missing
"$BIN" seed-demo
# A development server: the README's walkthrough signs in with the test identity
# provider on 127.0.0.1, which production refuses (keys must come over https).
export LR_IDENTITY_ALLOW_LOOPBACK=${LR_IDENTITY_ALLOW_LOOPBACK:-true}
# The browser app at / signs in to the demo tenant.
export LR_WEB_TENANT=${LR_WEB_TENANT:-demo}
echo "serving on http://${LR_HOST:-127.0.0.1}:${LR_PORT:-8080} (tenant: demo; the web app at /)"
exec "$BIN" serve
