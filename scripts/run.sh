#!/usr/bin/env bash
# `make run`: with nothing configured, installs what is missing, starts a local
# PostgreSQL under .data/, migrates, creates the demo tenant and serves on
# 127.0.0.1:8080, the web app at /. With LR_DATABASE_URL set, uses that database instead.
# Mail (verification codes, password resets) goes to a local mail catcher on 127.0.0.1:2525,
# which keeps every message under .data/mail/new/, unless LR_RUN_MAIL=off.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/swift-flags.sh

scripts/install-deps.sh
if [ -z "${LR_DATABASE_URL:-}" ]; then
    scripts/postgres.sh start
    while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env)
fi
export LR_MIGRATE_DATABASE_URL=${LR_MIGRATE_DATABASE_URL:-$LR_DATABASE_URL}

swift build "${SWIFT_FLAGS[@]}" --product landmark-remark
BIN=$(swift build --show-bin-path)/landmark-remark
"$BIN" migrate
"$BIN" tenant create demo --name "Demo" --if-missing
"$BIN" seed-demo
# A development server: the README's walkthrough signs in with the test identity
# provider on 127.0.0.1, which production refuses (keys must come over https).
export LR_IDENTITY_ALLOW_LOOPBACK=${LR_IDENTITY_ALLOW_LOOPBACK:-true}
# The browser app at / signs in to the demo tenant.
export LR_WEB_TENANT=${LR_WEB_TENANT:-demo}
# A local mail catcher, and the demo tenant's mail through it (with TLS and a login, as a
# real relay): a newcomer can sign up with an email, verify it and reset a password.
if [ "${LR_RUN_MAIL:-on}" != off ]; then
    source scripts/lib/mail-catcher.sh
    install_mail_catcher .data/mail
    mkdir -p .data/mail
    [ -s .data/data-key ] || openssl rand -base64 32 > .data/data-key
    export LR_DATA_KEY=${LR_DATA_KEY:-$(cat .data/data-key)}
    export LR_SMTP_CA_FILE=${LR_SMTP_CA_FILE:-$PWD/.data/mail/smtp-cert.pem}
    "$MAIL_CATCHER_PYTHON" scripts/test-smtp-server.py --port 2525 --tls starttls --cert .data/mail/smtp-cert.pem \
        --key .data/mail/smtp-key.pem --maildir .data/mail --user demo --password demo-mail > .data/mail/ready &
    CATCHER=$!
    trap 'kill $CATCHER 2>/dev/null' EXIT
    psql -q "$LR_MIGRATE_DATABASE_URL" -c "SELECT admin.set_tenant_mail('demo', 'smtp://127.0.0.1:2525', 'demo', 'demo-mail', 'noreply@demo.example', 'Landmark Remark demo')" \
        -c "SELECT 1 FROM admin.set_tenant_setting('demo', 'link_base_url', 'http://${LR_HOST:-127.0.0.1}:${LR_PORT:-8080}')" >/dev/null
    echo "mail: every message goes to .data/mail/new/ (the .json beside each .eml holds its text), not to real addresses"
fi
echo "serving on http://${LR_HOST:-127.0.0.1}:${LR_PORT:-8080} (tenant: demo; the web app at /)"
"$BIN" serve
