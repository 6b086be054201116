#!/usr/bin/env bash
# gVisor beside Docker for CI (issue 31): installs Debian's runsc and starts a second dockerd
# on a private socket, with its own data root, exec root and containerd (never touching the
# main engine), that offers runsc as a runtime (`--add-runtime runsc=…`; runc stays the
# default, a task asks for gVisor with sandbox.runtime / --runtime runsc). The sandbox image is
# copied from the main engine (`docker save | docker -H … load`) when this one lacks it or has
# another version. Prints the engine's address (for STEPBOX_GVISOR_HOST) on stdout; logs go to
# stderr. Idempotent: an engine already answering on the socket is reused.
# Usage: .ci/gvisor.sh          set up; prints unix:///run/stepbox-ci-gvisor/docker.sock
#        .ci/gvisor.sh stop     stops the engine this script started (if it did)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
run=/run/stepbox-ci-gvisor
sock=$run/docker.sock
pidfile=$run/dockerd.pid
data=/var/lib/stepbox-ci-gvisor
wrapper=$data/runsc-wrapper
logfile=/var/log/stepbox-ci-gvisor.log
host="unix://$sock"
# The image tag from its one source (SANDBOX_IMAGE in shared/constants.ts), so a version bump
# there reaches this script (a hard-coded tag here once copied the previous image).
image=$(sed -n "s/^export const SANDBOX_IMAGE = '\(.*\)';$/\1/p" shared/constants.ts)
[ -n "$image" ] || { echo "cannot read SANDBOX_IMAGE from shared/constants.ts" >&2; exit 3; }
label='{{index .Config.Labels "stepbox.image.version"}}'
log() { echo "[ci:gvisor] $(date -u +%H:%M:%S) $*" >&2; }

if [ "${1:-}" = stop ]; then
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    log "stopping the gVisor dockerd (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    rm -f "$pidfile"
  fi
  exit 0
fi

answers() { curl -fsS --max-time 5 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; }

if ! command -v runsc >/dev/null; then
  log "apt package: runsc"
  apt-get install -y -qq --no-install-recommends runsc >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends runsc >/dev/null; }
fi

mkdir -p "$run" "$data"
# gVisor's own network stack needs a netns it can configure; on this kernel (no iptables, no
# bridge) `--network=none` is what works, and sandboxes ask for no network by default. A task
# that names a network is refused on this engine by Docker itself (no such network).
cat >"$wrapper" <<WRAP
#!/bin/sh
exec $(command -v runsc) --network=none "\$@"
WRAP
chmod 755 "$wrapper"

if answers; then
  log "the gVisor dockerd already answers at $host; reusing it"
else
  log "starting a second dockerd at $host with runtime runsc (beside the main engine)"
  dockerd -H "$host" --data-root "$data/docker" --exec-root "$run/exec" --pidfile "$pidfile" \
    --bridge=none --iptables=false --ip-masq=false --add-runtime "runsc=$wrapper" \
    >"$logfile" 2>&1 &
  started=$!
  for i in $(seq 1 60); do
    answers && break
    if ! kill -0 "$started" 2>/dev/null; then
      log "dockerd exited; its log:"; tail -50 "$logfile" >&2; exit 3
    fi
    [ "$i" = 60 ] && { log "dockerd did not answer within 60 s"; tail -50 "$logfile" >&2; exit 3; }
    sleep 1
  done
fi

want=$(docker image inspect "$image" --format "$label" 2>/dev/null || true)
have=$(docker -H "$host" image inspect "$image" --format "$label" 2>/dev/null || true)
if [ -z "$want" ]; then
  log "the main engine has no $image to copy; build it first (npx stepbox image build)"; exit 3
elif [ "$want" = "$have" ]; then
  log "the gVisor engine has $image with version $have"
else
  log "loading $image (version $want) into the gVisor engine: docker save | docker load"
  docker save "$image" | docker -H "$host" load >&2
fi
echo "$host"
