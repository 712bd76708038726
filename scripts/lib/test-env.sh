# Sourced by scripts/test.sh and scripts/test-citus.sh: what both need to point the Swift
# tests at a cluster. Run from the repository's root.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# export_test_urls < LR_*=URL lines (`scripts/postgres.sh env DIR`, `scripts/citus.sh env DIR`):
# each exported as LR_TEST_*, where the tests look for them.
export_test_urls() {
    local name value
    while IFS='=' read -r name value; do
        export "${name/LR_/LR_TEST_}=$value"
    done
}

# start_restart_cluster DIR: the plain cluster that one test restarts to prove the pool
# survives it, apart from the one every other test uses.
start_restart_cluster() {
    LR_PG_FSYNC=off scripts/postgres.sh start "$1" "$(free_port)"
    LR_TEST_RESTART_DATABASE_URL=$(scripts/postgres.sh env "$1" | sed -n 's/^LR_MIGRATE_DATABASE_URL=//p')
    export LR_TEST_RESTART_DATABASE_URL
    export LR_TEST_POSTGRES_RESTART="$PWD/scripts/postgres.sh restart $1"
}

# prepare_mail_server DIR: what the tests' loopback SMTP server needs (scripts/test-smtp-server.py):
# aiosmtpd in a virtual environment under .build/smtp-venv (reused when present), and a
# self-signed certificate for localhost and 127.0.0.1 in DIR, which the tests trust as the CA.
prepare_mail_server() {
    local venv=$PWD/.build/smtp-venv
    python3 -c 'import venv, ensurepip' 2>/dev/null || scripts/install-deps.sh python3-venv
    if ! "$venv/bin/python" -c 'import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != "1.4.6")' 2>/dev/null; then
        echo "installing aiosmtpd 1.4.6 into $venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "aiosmtpd==1.4.6"
    fi
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/smtp-key.pem" -out "$1/smtp-cert.pem" -days 2 \
        -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    export LR_TEST_SMTP_PYTHON="$venv/bin/python"
    export LR_TEST_SMTP_CERT="$1/smtp-cert.pem" LR_TEST_SMTP_KEY="$1/smtp-key.pem"
}
