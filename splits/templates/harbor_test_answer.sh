#!/usr/bin/env bash
# Verifier exported by trajforge: the answer in /app/answer.txt against the expected one (an
# answer key or a value), with the answer checker of `trajforge verify` (tests/checker/);
# reward 1 or 0.
set -uo pipefail
APP="${TRAJFORGE_APP:-/app}"
LOGS="${TRAJFORGE_LOGS:-/logs/verifier}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
EXPECTED="$HERE/expected_key.json"
[ -f "$EXPECTED" ] || EXPECTED="$HERE/expected_answer.txt"
python3 "$HERE/grade_answer.py" "$APP/$answer_file" "$EXPECTED" "$LOGS/reward.txt"
