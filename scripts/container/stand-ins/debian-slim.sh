#!/usr/bin/env bash
# debian-slim.sh DIR: a Debian 12 root file system like the registry's debian:bookworm-slim,
# made with debootstrap from Debian's own mirror (no registry is reachable here). "Slim" as
# the official image is slim: dpkg leaves out documentation, manuals and translations in
# this image and in every package installed on top of it, and apt keeps no caches.
set -euo pipefail
DIR=$1
MIRROR=${LR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" >"$DIR.log" 2>&1 || { tail -n 20 "$DIR.log" >&2; exit 1; }

cat >"$DIR/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
cat >"$DIR/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
echo 'Acquire::Languages "none";' >"$DIR/etc/apt/apt.conf.d/docker-no-languages"
# What debootstrap already unpacked, trimmed as dpkg now would.
find "$DIR/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$DIR/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$DIR"/usr/share/{man,groff,info,lintian,linda}/* "$DIR"/var/cache/apt/* "$DIR"/var/lib/apt/lists/* "$DIR"/var/log/*.log
find "$DIR/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
# The same suites as the official image: security updates too.
cat >"$DIR/etc/apt/sources.list" <<LIST
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${LR_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
LIST
