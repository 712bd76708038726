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

# prepare_mail_server DIR: the tests' loopback SMTP server (scripts/test-smtp-server.py), its
# Python and a certificate in DIR, exported as LR_TEST_SMTP_* for the tests.
prepare_mail_server() {
    source scripts/lib/mail-catcher.sh
    install_mail_catcher "$1"
    export LR_TEST_SMTP_PYTHON="$MAIL_CATCHER_PYTHON"
    export LR_TEST_SMTP_CERT="$1/smtp-cert.pem" LR_TEST_SMTP_KEY="$1/smtp-key.pem"
}
