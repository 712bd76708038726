#!/usr/bin/env bash
# base-images.sh: the images that deploy/Dockerfile, deploy/nginx/Dockerfile and
# deploy/compose.yaml start FROM, made on this machine, since no image registry is
# reachable here: debian:bookworm-slim with debootstrap from Debian's mirror, and
# stand-ins for swift:6.3-bookworm, nginx:1.27 and postgis/postgis:15-3.5 built on it
# (stand-ins/*.Containerfile say what each keeps of the original). They are tagged
# with the registry's names, so the deploy files find them as they would anywhere.
#
# Cached: an image is made again only when its recipe (this folder, the toolchain's
# version) changed, and debootstrap's tarball is kept in .data/container/ (ignored).
# Needs CONTAINERS_CONF (scripts/container/containers.conf) and root.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/container
CACHE=${LR_CONTAINER_CACHE:-.data/container}
mkdir -p "$CACHE"

recipe() { cat "$@" | sha256sum | cut -c1-16; }
# have IMAGE RECIPE: the image exists and was made from this recipe.
have() {
    [ "$(podman image inspect --format '{{index .Labels "landmark-remark.recipe"}}' "$1" 2>/dev/null || true)" = "$2" ]
}

SLIM=docker.io/library/debian:bookworm-slim
SLIM_RECIPE=$(recipe "$HERE/stand-ins/debian-slim.sh")
if ! have "$SLIM" "$SLIM_RECIPE"; then
    TARBALL=$CACHE/debian-bookworm-slim-$SLIM_RECIPE.tar
    if [ ! -s "$TARBALL" ]; then
        echo "base images: debootstrap of Debian 12 (minbase)"
        ROOTFS=$(mktemp -d /tmp/landmark-remark-rootfs.XXXXXX)
        trap 'rm -rf "$ROOTFS" "$ROOTFS.log"' EXIT
        "$HERE/stand-ins/debian-slim.sh" "$ROOTFS"
        tar --numeric-owner -C "$ROOTFS" -cf "$TARBALL.part" . && mv "$TARBALL.part" "$TARBALL"
        rm -rf "$ROOTFS" "$ROOTFS.log"; trap - EXIT
    fi
    podman import --quiet --change 'CMD ["bash"]' --change "LABEL landmark-remark.recipe=$SLIM_RECIPE" \
        "$TARBALL" "$SLIM" >/dev/null
fi

# stand_in IMAGE CONTAINERFILE RECIPE [podman build options...]: RECIPE is what else,
# beside this folder and the base, makes the image (the toolchain's version).
stand_in() {
    local image=$1 file=$2 extra=$3; shift 3
    local id; id=$(recipe "$HERE/stand-ins/"* <(echo "$SLIM_RECIPE $extra"))
    have "$image" "$id" && return 0
    echo "base images: $image (stand-in, $file)"
    podman build --quiet --network host --label "landmark-remark.recipe=$id" "$@" \
        -f "$HERE/stand-ins/$file" -t "$image" "$HERE/stand-ins" >/dev/null
}
stand_in docker.io/library/swift:6.3-bookworm swift.Containerfile "$(swift --version 2>/dev/null | head -n 1)" \
    --volume /opt/swift:/mnt/toolchain:ro
stand_in docker.io/library/nginx:1.27 nginx.Containerfile ""
stand_in docker.io/postgis/postgis:15-3.5 postgis.Containerfile ""
