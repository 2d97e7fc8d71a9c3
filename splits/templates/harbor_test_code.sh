#!/usr/bin/env bash
# Verifier exported by trajforge: the hidden tests are copied over the agent's /app and the
# task's check runs there; reward 1 when it passes, else 0 (/logs/verifier/reward.txt).
set -uo pipefail
APP="${TRAJFORGE_APP:-/app}"
LOGS="${TRAJFORGE_LOGS:-/logs/verifier}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
cd "$APP" || exit 0
if [ -d "$HERE/hidden" ]; then cp -R "$HERE/hidden/." "$APP/"; fi
( $command )
if [ $$? -eq 0 ]; then echo 1 > "$LOGS/reward.txt"; fi
