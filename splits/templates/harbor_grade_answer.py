"""Grade an answer file: argv = given answer, expected answer, reward file (1 or 0 written).

Uses trajforge's answer checkers, copied next to this file (``checker/``): the very rule
``trajforge verify`` applies. The expected answer is an answer key (``expected_key.json``: the
grounded facts a reconstructed qa answer must state) or a value (``expected_answer.txt``). A
missing or empty answer file scores 0.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "checker"))

from trajforge.records import AnswerKey
from trajforge.verifiers.answer import check_answer
from trajforge.verifiers.answer_facts import check_key

given_path, expected_path, reward_path = (Path(p) for p in sys.argv[1:4])
given = given_path.read_text(encoding="utf-8", errors="replace") if given_path.is_file() else ""
expected = expected_path.read_text(encoding="utf-8").strip()
if expected_path.suffix == ".json":
    check = check_key(AnswerKey.model_validate_json(expected), given)
else:
    check = check_answer(expected, given)
reward_path.write_text("1\n" if check.passed else "0\n")
print(f"{'pass' if check.passed else 'fail'}: {check.reason}", file=sys.stderr)
