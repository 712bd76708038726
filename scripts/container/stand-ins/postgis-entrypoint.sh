#!/usr/bin/env bash
# As the official postgres image's docker-entrypoint.sh, for what compose.yaml uses:
# on an empty data directory, initdb with POSTGRES_USER and POSTGRES_PASSWORD, then
# POSTGRES_DB, then /docker-entrypoint-initdb.d/*.sh and *.sql on a server that listens
# only on its socket; then postgres itself, listening on every address.
set -euo pipefail
if [ "${1:-}" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

export POSTGRES_USER=${POSTGRES_USER:-postgres}
export POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?the database is uninitialised: set POSTGRES_PASSWORD}"
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
        --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
            -v db="$POSTGRES_DB" <<<'CREATE DATABASE :"db"' >/dev/null
    fi
    for file in /docker-entrypoint-initdb.d/*; do
        case $file in
            *.sh)  echo "$0: running $file"; if [ -x "$file" ]; then "$file"; else . "$file"; fi ;;
            *.sql) echo "$0: running $file"; psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$file" ;;
        esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "$0: PostgreSQL init process complete; ready for start up."
fi
exec postgres -c listen_addresses='*' "${@:2}"
