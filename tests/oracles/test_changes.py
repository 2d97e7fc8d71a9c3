"""changed_lines: added / modified lines of the completed workspace, by difflib."""

from __future__ import annotations

from tests.fixtures.scenarios import CALC_BUGGY, INVENTORY, REMOVE_ITEM, STATS
from trajforge.oracles.changes import changed_lines


def test_modified_line_of_the_repair() -> None:
    fixed = CALC_BUGGY.replace("return high\n    if value >", "return low\n    if value >")
    assert changed_lines({"calc.py": CALC_BUGGY}, {"calc.py": fixed}) == {"calc.py": {4}}


def test_added_method_lines_only() -> None:
    after = INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM)
    lines = changed_lines({"inventory.py": INVENTORY}, {"inventory.py": after})
    added = after.splitlines()
    assert lines == {"inventory.py": set(range(8, 18))}
    assert added[7].strip() == "" and added[8].startswith("    def remove_item")
    assert all(n > len(INVENTORY.splitlines()) for n in lines["inventory.py"])


def test_new_file_is_all_lines_and_deleted_or_unchanged_files_absent() -> None:
    before = {"old.py": "x = 1\n", "same.py": "y = 2\n"}
    after = {"same.py": "y = 2\n", "stats.py": STATS, "empty.py": ""}
    lines = changed_lines(before, after)
    assert lines == {"stats.py": set(range(1, len(STATS.splitlines()) + 1)), "empty.py": set()}


def test_deleted_lines_mark_nothing_and_mixed_edits_mark_their_lines() -> None:
    before = {"a.py": "a = 1\nb = 2\nc = 3\nd = 4\n"}
    assert changed_lines(before, {"a.py": "a = 1\nc = 3\nd = 4\n"}) == {}
    after = {"a.py": "a = 1\nb = 20\nc = 3\nnew = 0\nd = 4\ne = 5\n"}
    assert changed_lines(before, after) == {"a.py": {2, 4, 6}}


def test_line_endings_and_trailing_newline_do_not_count_as_changes() -> None:
    before = {"a.py": "a = 1\nb = 2\n"}
    assert changed_lines(before, {"a.py": "a = 1\r\nb = 2"}) == {}


def test_a_moved_file_marks_only_the_lines_the_move_changed() -> None:
    """pi-mono's restructuring (``tui/theme.ts`` → ``modes/interactive/theme/theme.ts``): a
    moved file whose imports were respelled is those lines, not every line; a new file unlike
    every deleted one stays all lines; a deleted file is the source of one move at most."""
    body = "".join(f"export const v{i} = {i};\n" for i in range(12))
    before = {"src/tui/theme.ts": 'import { a } from "../config.js";\n' + body}
    moved = 'import { a } from "../../../utils/config.js";\n' + body
    after = {
        "src/modes/interactive/theme/theme.ts": moved,
        "src/modes/interactive/theme/copy.ts": moved,
        "src/fresh.ts": "export const fresh = 1;\n",
    }
    lines = changed_lines(before, after)
    assert lines["src/modes/interactive/theme/theme.ts"] == {1}
    assert lines["src/modes/interactive/theme/copy.ts"] == set(range(1, 14))
    assert lines["src/fresh.ts"] == {1}
    unlike = {"src/other.ts": "".join(f"let w{i} = '{i}';\n" for i in range(12))}
    assert changed_lines(before, unlike) == {"src/other.ts": set(range(1, 13))}


def test_a_formatters_reflow_is_no_change() -> None:
    """pi-mono's config move: the replayed ``npm run check`` (biome ``--write``) laid a warning
    out anew in model-resolver.ts, and mutants of its unchanged words survived every test. A
    replacement that only moves the same code over lines, or adds or drops a trailing comma
    before a closing bracket, marks nothing; a changed word in it still does."""
    before = {"m.ts": "if (x) {\n\tconsole.error(\n\t\tchalk.yellow(`Warning: ${x}`),\n\t);\n}\n"}
    joined = "if (x) {\n\tconsole.error(chalk.yellow(`Warning: ${x}`));\n}\n"
    assert changed_lines(before, {"m.ts": joined}) == {}
    reworded = joined.replace("Warning", "Careful")
    assert changed_lines(before, {"m.ts": reworded}) == {"m.ts": {2}}
    spaced = {"m.ts": "a = f(1, 2)\n"}
    assert changed_lines(spaced, {"m.ts": "a = f(1,2)\n"}) == {}
    assert changed_lines(spaced, {"m.ts": "a = f(12)\n"}) == {"m.ts": {1}}
