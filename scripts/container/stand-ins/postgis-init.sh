#!/bin/sh
# As the official postgis image's 10_postgis.sh: PostGIS in the new database.
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -c 'CREATE EXTENSION IF NOT EXISTS postgis'
