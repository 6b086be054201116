#!/usr/bin/env bash
# Builds the stepbox sandbox image from Debian packages alone, for engines that
# cannot reach an image registry. Every package is installed at debootstrap time
# (a RUN step would have no network on a --bridge=none engine); the user and
# /workspace are created in the chroot; USER/WORKDIR/ENV/LABEL come from
# `docker import --change` (or `podman import --change`), one ENV per variable: Podman
# takes `ENV A=1 B=2` as one variable named A with the value `1 B=2`.
# Usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]
# STEPBOX_ENGINE=podman (set by `stepbox image build` when the engine is Podman) imports
# with the podman client, through DOCKER_HOST when it is set (podman --url): the image
# lands in the store of the engine stepbox uses, a rootless user's own one included.
set -euo pipefail
tag=${1:?usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]}
version=${2:?usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]}
mirror=${3:-http://deb.debian.org/debian}
packages=bash,bash-static,busybox-static,coreutils,findutils,python3,git,procps,ca-certificates,less,sed,grep,gzip,tar,diffutils

engine=${STEPBOX_ENGINE:-docker}
for tool in debootstrap tar; do
  command -v "$tool" >/dev/null || { echo "stepbox: $tool is missing; install it: apt-get install -y $tool" >&2; exit 3; }
done
# The client that imports the root filesystem: the engine's own, else the other one (the
# docker client talks to Podman's socket through DOCKER_HOST as well).
importer=
if [ "$engine" = podman ]; then
  if command -v podman >/dev/null; then importer=podman; elif command -v docker >/dev/null; then importer=docker; fi
  [ -n "$importer" ] || { echo "stepbox: neither podman nor docker (the client) is installed to import the image; install it: apt-get install -y podman" >&2; exit 3; }
else
  if command -v docker >/dev/null; then importer=docker; elif command -v podman >/dev/null; then importer=podman; fi
  # Debian ships the docker CLI in the docker.io package.
  [ -n "$importer" ] || { echo "stepbox: docker (the client) is missing to import the image; install it: apt-get install -y docker.io (with Podman: apt-get install -y podman)" >&2; exit 3; }
fi
if [ "$(id -u)" != 0 ]; then
  if [ "$engine" = podman ]; then
    # Rootless Podman: debootstrap needs root, the image goes to this user's store through its socket.
    echo "stepbox: the offline builder needs root (debootstrap); keep DOCKER_HOST so the image is imported into your Podman's store; run: sudo --preserve-env=DOCKER_HOST npx stepbox image build --offline" >&2
  else
    echo "stepbox: the offline builder needs root (debootstrap); run it with sudo" >&2
  fi
  exit 3
fi

root=$(mktemp -d /tmp/stepbox-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "[image] debootstrap bookworm into $root (packages: $packages)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >&2

# The sandbox user: uid/gid 1000, home outside /workspace so a tmpfs there hides nothing.
chroot "$root" /usr/sbin/groupadd --gid 1000 agent
chroot "$root" /usr/sbin/useradd --uid 1000 --gid 1000 --home-dir /home/agent --create-home --shell /bin/bash agent
mkdir -p "$root/workspace" && chown 1000:1000 "$root/workspace"
# Trim what a sandbox never needs: apt lists and caches, docs.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* "$root"/usr/share/man/*

import=("$importer")
# podman as root would import into root's own store; --url sends it to the engine stepbox uses.
if [ "$importer" = podman ] && [ -n "${DOCKER_HOST:-}" ]; then import+=(--url "$DOCKER_HOST"); fi
echo "[image] importing as $tag with ${import[*]} import" >&2
tar -C "$root" -c . | "${import[@]}" import \
  --change 'USER agent' \
  --change 'WORKDIR /workspace' \
  --change 'ENV HOME=/home/agent' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV TZ=UTC' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL stepbox.image.version=$version" \
  --change 'CMD ["sleep", "infinity"]' \
  - "$tag" >&2
echo "[image] built $tag (version $version, offline path)" >&2
