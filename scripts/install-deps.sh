#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and `make run` need, only when
# missing (libjs-leaflet: the browser app's map, served at /vendor/leaflet/; libcurl: SMTP;
# libvips-tools and bubblewrap: the sandboxed photo worker; exiftool: the photo tests' witness).
set -euo pipefail
packages=(postgresql-15 postgresql-15-postgis-3 postgresql-contrib libpq-dev libssl-dev libcurl4-openssl-dev libjs-leaflet libvips-tools bubblewrap libimage-exiftool-perl "$@")
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
