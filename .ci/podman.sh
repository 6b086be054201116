#!/usr/bin/env bash
# Podman beside Docker for CI (issue 22): installs Debian's podman + catatonit, starts a
# rootful `podman system service` on a private socket (never touching the Docker engine),
# and loads the sandbox image from Docker's (`docker save | podman load`) when Podman lacks
# it or has another version. Prints the engine's address (for STEPBOX_PODMAN_HOST) on
# stdout; logs go to stderr. Idempotent: a service already answering on the socket is
# reused, an image with Docker's version label is kept.
# Usage: .ci/podman.sh          set up; prints unix:///run/stepbox-ci-podman.sock
#        .ci/podman.sh stop     stops the service this script started (if it did)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
sock=/run/stepbox-ci-podman.sock
pidfile=/run/stepbox-ci-podman.pid
host="unix://$sock"
# The image tag from its one source (SANDBOX_IMAGE in shared/constants.ts), so a version bump
# there reaches this script (a hard-coded tag here once copied the previous image).
image=$(sed -n "s/^export const SANDBOX_IMAGE = '\(.*\)';$/\1/p" shared/constants.ts)
[ -n "$image" ] || { echo "cannot read SANDBOX_IMAGE from shared/constants.ts" >&2; exit 3; }
label='{{index .Config.Labels "stepbox.image.version"}}'
log() { echo "[ci:podman] $(date -u +%H:%M:%S) $*" >&2; }

if [ "${1:-}" = stop ]; then
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    log "stopping podman system service (pid $pid)"
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  fi
  exit 0
fi

answers() { curl -fsS --max-time 5 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; }

if ! command -v podman >/dev/null || ! command -v catatonit >/dev/null; then
  log "apt packages: podman catatonit"
  apt-get install -y -qq --no-install-recommends podman catatonit >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends podman catatonit >/dev/null; }
fi

if answers; then
  log "podman already answers at $host; reusing it"
else
  log "starting podman system service --time=0 $host (rootful, beside dockerd)"
  # From a folder of its own: conmon writes an empty `oom` file into its working directory
  # when a container is OOM-killed (the sandbox-oom tests do that), which landed in the clone.
  mkdir -p /var/lib/stepbox-ci-podman
  (cd /var/lib/stepbox-ci-podman && exec podman system service --time=0 "$host" >/var/log/stepbox-ci-podman.log 2>&1) &
  echo $! >"$pidfile"
  for i in $(seq 1 60); do
    answers && break
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      log "podman exited; its log:"; tail -50 /var/log/stepbox-ci-podman.log >&2; exit 3
    fi
    [ "$i" = 60 ] && { log "podman did not answer within 60 s"; exit 3; }
    sleep 1
  done
fi

want=$(docker image inspect "$image" --format "$label" 2>/dev/null || true)
have=$(podman --url "$host" image inspect "$image" --format "$label" 2>/dev/null || true)
if [ -z "$want" ]; then
  log "Docker has no $image to copy; build it first (npx stepbox image build)"; exit 3
elif [ "$want" = "$have" ]; then
  log "Podman has $image with version $have"
else
  log "loading $image (version $want) into Podman: docker save | podman load"
  docker save "$image" | podman --url "$host" load >&2
fi
echo "$host"
