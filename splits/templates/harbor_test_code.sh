#!/usr/bin/env bash
# Verifier exported by trajforge: the hidden tests and the check's own files (the task's tests,
# runner configuration and start-up files) are copied over the agent's /app, after removing
# the runner configuration the task does not own, and the task's check runs there; reward 1
# when it passes, else 0 (/logs/verifier/reward.txt).
set -uo pipefail
APP="${TRAJFORGE_APP:-/app}"
LOGS="${TRAJFORGE_LOGS:-/logs/verifier}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
cd "$APP" || exit 0
find "$APP" -path "$APP/node_modules" -prune -o -type f \( $foreign \) -exec rm -f {} +
if [ -d "$HERE/hidden" ]; then cp -R "$HERE/hidden/." "$APP/"; fi
( $command )
if [ $$? -eq 0 ]; then echo 1 > "$LOGS/reward.txt"; fi
