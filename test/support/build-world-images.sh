#!/usr/bin/env bash
# Builds the two "any image" test images (test/integration/any-image.test.ts), images with
# nothing of stepbox's: no python3, no bash, no user 1000.
#   stepbox-test-busybox:1    busybox-static and its applet links, nothing else (no /etc/passwd,
#                             no loader, no libc): `docker import` of a folder
#   stepbox-test-nopython:1   the stepbox image without python3 and bash (dash as /bin/sh,
#                             coreutils, util-linux): its export, filtered, imported again
# Usage: build-world-images.sh SANDBOX_IMAGE   (the stepbox image, e.g. stepbox-sandbox:2)
# Idempotent: an image already there is kept. Needs the docker client, and busybox-static on
# this machine (apt-get install -y busybox-static).
set -euo pipefail
sandbox=${1:?usage: build-world-images.sh SANDBOX_IMAGE}
log() { echo "[world-images] $*" >&2; }

if ! docker image inspect stepbox-test-busybox:1 >/dev/null 2>&1; then
  bb=$(command -v busybox || true)
  [ -n "$bb" ] || { echo "busybox is missing; install it: apt-get install -y busybox-static" >&2; exit 3; }
  file -L "$bb" 2>/dev/null | grep -q 'statically linked' || ldd "$bb" 2>&1 | grep -q 'not a dynamic' ||
    { echo "$bb is not static; install busybox-static: apt-get install -y busybox-static" >&2; exit 3; }
  root=$(mktemp -d /tmp/stepbox-busybox.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root/bin"
  cp "$bb" "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
  done
  tar -C "$root" -c . | docker import --change 'ENV PATH=/bin' - stepbox-test-busybox:1 >/dev/null
  log "built stepbox-test-busybox:1 ($(ls "$root/bin" | wc -l) files in /bin)"
fi

if ! docker image inspect stepbox-test-nopython:1 >/dev/null 2>&1; then
  id=$(docker create "$sandbox" true)
  # merged /usr: /bin is a link to usr/bin, so the programs are under usr/.
  docker export "$id" |
    tar -f - --delete --wildcards 'usr/bin/python3*' 'usr/bin/bash' 'usr/bin/bash-static' 'usr/bin/rbash' \
      'usr/lib/python3*' 'usr/local/lib/python3*' |
    docker import --change 'USER agent' --change 'WORKDIR /workspace' --change 'ENV LANG=C.UTF-8' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      - stepbox-test-nopython:1 >/dev/null
  docker rm -f "$id" >/dev/null
  log "built stepbox-test-nopython:1 (from $sandbox, without python3 and bash)"
fi
