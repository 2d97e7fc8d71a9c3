#!/usr/bin/env bash
# Install Docker and debootstrap from Debian, start dockerd, build the sandbox image.
#
# Idempotent: each step is skipped when already done. Run as root on Debian (bookworm) after
# trajforge is installed; only Debian's package mirror has to be reachable (no registry).
#
#   .ci/docker-setup.sh
#
# Environment:
#   DOCKER_HOST           engine socket to use/start (default unix:///var/run/docker.sock)
#   DOCKERD_LOG           where a dockerd started here logs (default /var/log/trajforge-dockerd.log)
#   DOCKERD_ARGS          extra dockerd arguments (e.g. a separate --data-root)
#   DOCKERD_WAIT_S        how long to wait for the engine (default 60)
#   TRAJFORGE             trajforge command (default: trajforge, else python3 -m trajforge.cli.main)
set -euo pipefail

started=$(date +%s)
log() { echo "docker-setup: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, dockerd and debootstrap need it)"

install_packages() {
    local missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    [ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
    if [ ${#missing[@]} -eq 0 ]; then
        log "docker.io and debootstrap already installed"
        return
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

engine_up() { docker info >/dev/null 2>&1; }

already_starting() {
    if [ -n "${DOCKER_HOST:-}" ]; then
        pgrep -f -- "dockerd -H $DOCKER_HOST" >/dev/null
    else
        pgrep -x dockerd >/dev/null
    fi
}

start_dockerd() {
    if engine_up; then
        log "docker engine already running"
        return
    fi
    local socket="${DOCKER_HOST:-unix:///var/run/docker.sock}"
    local logfile="${DOCKERD_LOG:-/var/log/trajforge-dockerd.log}"
    if already_starting; then
        log "dockerd is already starting; waiting for it"
    else
        log "starting dockerd on $socket (log: $logfile)"
        # shellcheck disable=SC2086  # DOCKERD_ARGS is a list of words
        nohup dockerd -H "$socket" ${DOCKERD_ARGS:-} >"$logfile" 2>&1 &
    fi
    local wait_s="${DOCKERD_WAIT_S:-60}" waited=0
    until engine_up; do
        if [ "$waited" -ge "$wait_s" ]; then
            tail -n 20 "$logfile" >&2 || true
            die "docker engine did not come up within ${wait_s}s (see $logfile)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    log "docker engine up after ${waited}s"
}

build_image() {
    local cmd=(trajforge)
    if [ -n "${TRAJFORGE:-}" ]; then
        read -r -a cmd <<<"$TRAJFORGE"
    elif ! command -v trajforge >/dev/null; then
        cmd=(python3 -m trajforge.cli.main)
    fi
    "${cmd[@]}" sandbox build-image
}

install_packages
start_dockerd
build_image
log "done in $(($(date +%s) - started))s"
