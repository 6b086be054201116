#!/usr/bin/env bash
# Builds the stepbox sandbox image from Debian packages alone, for engines that
# cannot reach an image registry. Every package is installed at debootstrap time
# (a RUN step would have no network on a --bridge=none engine); the user and
# /workspace are created in the chroot; USER/WORKDIR/ENV/LABEL come from
# `docker import --change`.
# Usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]
set -euo pipefail
tag=${1:?usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]}
version=${2:?usage: build-offline.sh IMAGE_TAG VERSION [MIRROR]}
mirror=${3:-http://deb.debian.org/debian}
packages=bash,coreutils,findutils,python3,git,procps,ca-certificates,less,sed,grep,gzip,tar,diffutils

for tool in debootstrap docker tar; do
  # Debian ships the docker CLI in the docker.io package.
  pkg=$tool; [ "$tool" = docker ] && pkg=docker.io
  command -v "$tool" >/dev/null || { echo "stepbox: $tool is missing; install it: apt-get install -y $pkg" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "stepbox: the offline builder needs root (debootstrap); run it with sudo" >&2; exit 3; }

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

echo "[image] importing as $tag" >&2
tar -C "$root" -c . | docker import \
  --change 'USER agent' \
  --change 'WORKDIR /workspace' \
  --change 'ENV HOME=/home/agent LANG=C.UTF-8 TZ=UTC PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL stepbox.image.version=$version" \
  --change 'CMD ["sleep", "infinity"]' \
  - "$tag" >&2
echo "[image] built $tag (version $version, offline path)" >&2
