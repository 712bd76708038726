#!/usr/bin/env bash
# First start of the database container (docker-entrypoint-initdb.d): the two
# roles of Landmark Remark, the database handed to the owner role, and the
# extensions that need a superuser. Passwords come from the container's
# environment (compose.yaml takes them from .env).
set -euo pipefail

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v owner_password="$LR_OWNER_PASSWORD" -v app_password="$LR_APP_PASSWORD" <<'SQL'
CREATE ROLE landmark_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE landmark_app LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD :'app_password';
ALTER DATABASE landmark_remark OWNER TO landmark_owner;
SQL

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname landmark_remark <<'SQL'
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS unaccent;
SQL
