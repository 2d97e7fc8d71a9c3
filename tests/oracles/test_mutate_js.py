"""JavaScript / TypeScript mutants through tree-sitter, on real-world sources."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from trajforge.oracles import treesitter
from trajforge.oracles.mutate import Mutant, mutants

DATA = Path(__file__).parent / "data"
MS = (DATA / "ms.js").read_text(encoding="utf-8")
SNAKE = (DATA / "snake.ts").read_text(encoding="utf-8")
NODE = shutil.which("node")

PAGER = """'use strict';
import { clamp } from "./util.js";

export function page<T>(items: T[], size: number, n: number): T[] {
  const start: number = n * size;
  let seen = 0;
  for (let i = 0; i < items.length; i++) {
    seen += 1;
  }
  if (!items.length || size <= 0) {
    return [];
  }
  log("paging");
  const ok = seen > 0 && true;
  return ok ? items.slice(start, start + size) : items.slice(0, size);
}
"""


def _lines(source: str) -> set[int]:
    return set(range(1, len(source.splitlines()) + 1))


def _check(found: list[Mutant], grammar: str, original: str) -> None:
    assert len({m.content for m in found}) == len(found)
    for m in found:
        assert m.content != original
        assert treesitter.parses(grammar, m.content.encode()), m.description
        before, after = original.splitlines(), m.content.splitlines()
        assert len(before) == len(after)
        differ = [n for n, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b]
        assert differ[0] == m.line, m.description  # multi-line spans change more lines


def test_typescript_every_family_and_no_faults_in_types_or_directives() -> None:
    found = mutants({"page.ts": PAGER}, {"page.ts": _lines(PAGER)}, limit=1000)
    _check(found, "typescript", PAGER)
    assert {m.operator for m in found} == {
        "compare", "arith", "bool", "const", "negate", "drop", "return", "slice"
    }  # fmt: skip
    descriptions = {m.description for m in found}
    for expected in (
        "`<` → `<=` in page.ts line 7",
        "`+=` → `-=` in page.ts line 8",
        "`||` → `&&` in page.ts line 10",
        "`!items.length` → `(items.length)` in page.ts line 10",
        "`true` → `false` in page.ts line 14",
        'drop `log("paging");` in page.ts line 13',
        "`return []` → `null` in page.ts line 11",
        "`start + size` → `(start + size) - 1` in page.ts line 15",
        "`ok` → `!(ok)` in page.ts line 15",
    ):
        assert expected in descriptions
    assert not {1, 2, 4} & {m.line for m in found}  # directive, import source, signature types


def test_real_typescript_mutants_parse_and_skip_type_declarations() -> None:
    found = mutants({"snake.ts": SNAKE}, {"snake.ts": _lines(SNAKE)}, limit=60, seed=3)
    assert len(found) == 60
    _check(found, "typescript", SNAKE)
    lines = SNAKE.splitlines()
    types = {n for n, text in enumerate(lines, 1) if text.startswith(("type ", "interface "))}
    interface = lines.index("interface GameState {") + 1
    types |= set(range(interface, interface + 9))
    assert not types & {m.line for m in mutants({"snake.ts": SNAKE}, {"snake.ts": types})}
    assert len({m.operator for m in found}) == 7  # snake.ts has no slice calls
    assert found == mutants({"snake.ts": SNAKE}, {"snake.ts": _lines(SNAKE)}, limit=60, seed=3)


BATTERY = (
    "const inputs = [['2 days'], ['1h'], ['-1.5h'], ['100'], ['1y'], ['3w'], ['1 week'],"
    " ['1 day'], ['10 secs'], ['5m'], ['a'.repeat(101)], [''], [NaN], [60000], [1000],"
    " [3600000], [86400000], [2 * 60000, {long: true}], [3 * 86400000, {long: true}],"
    " [1000, {long: true}], [90000, {long: true}], [123, {long: true}], [500],"
    " [36e5 * 30], [-36e5, {long: true}]];"
    "const run = (file) => inputs.map((args) => {"
    "  try { return String(require(file)(...args)); }"
    "  catch (e) { return 'threw: ' + e.message; } });"
    "const files = JSON.parse(process.argv[1]);"
    "console.log(JSON.stringify(files.map(run)));"
)


@pytest.mark.skipif(NODE is None, reason="SKIPPED LOUDLY: `node` is not installed here")
def test_real_javascript_mutants_run_and_most_change_behaviour(tmp_path: Path) -> None:
    found = mutants({"ms.js": MS}, {"ms.js": _lines(MS)}, limit=40, seed=1)
    assert len(found) == 40
    _check(found, "javascript", MS)
    assert {"compare", "arith", "bool", "const", "negate", "return"} <= {m.operator for m in found}
    (tmp_path / "orig.js").write_text(MS, encoding="utf-8")
    for m in found:
        (tmp_path / f"{m.id}.js").write_text(m.content, encoding="utf-8")
    files = ["./orig.js"] + [f"./{m.id}.js" for m in found]
    run = subprocess.run(
        [str(NODE), "-e", BATTERY, json.dumps(files)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    original, *results = json.loads(run.stdout)
    assert original[:2] == ["172800000", "3600000"]
    survivors = [m.description for m, out in zip(found, results, strict=True) if out == original]
    assert len(survivors) <= 6, f"{len(survivors)} of 40 mutants survive: {survivors}"
