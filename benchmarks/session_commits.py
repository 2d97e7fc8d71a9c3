"""The session's own commits read back (``reconstruct/session_commits.py``), beside the replay
of the same session with its repository.

    python benchmarks/session_commits.py [--corpus /work/shared/corpus] [--runs 5]

pi-mono's ``before-compaction.jsonl`` committed 29 times; its history was rebased before the
bundle was made, so each commit is looked up by subject and counts (one ``git log --all``,
then a ``git show --shortstat`` per same-subject commit, a ``git diff-tree`` and a ``git show``
per file of a found one). The bundle is cloned into a temporary folder first. Printed: the
median wall time of :func:`committed_files` beside the anchor, the median of the whole
``replay_session`` (repository found, commit chosen, files read, the session's commits read
back, the replay itself), both warm (the page cache holds the clone).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trajforge.reconstruct.formats.detect import all_formats, detect
from trajforge.reconstruct.paths import session_root
from trajforge.reconstruct.repos import RepoSearch
from trajforge.reconstruct.session_commits import RepoFolder, committed_files
from trajforge.reconstruct.sessionrepo import replay_session
from trajforge.records import Session

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _session(path: Path) -> Session:
    return next(s for s in detect(path, all_formats()).parse(path) if isinstance(s, Session))


def _median(runs: int, work: object) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    path = args.corpus / "pi-mono" / "before-compaction.jsonl"
    bundle = args.corpus / "repos" / "badlogic__pi-mono.bundle"
    if not path.is_file() or not bundle.is_file():
        print(f"the pi-mono session and bundle are not under {args.corpus}", file=sys.stderr)
        return 2
    session = _session(path)
    root = session_root(session.header.cwd, session.events)
    with tempfile.TemporaryDirectory(prefix="bench-commits-") as tmp:
        clone = Path(tmp) / "pi-mono"
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(bundle), str(clone)], check=True)
        search = RepoSearch(dirs=(tmp,))
        _, match = replay_session(session, root, None, search)
        if match is None or match.commit is None:
            print("the session's repository was not found", file=sys.stderr)
            return 1
        where = RepoFolder(clone, match.commit, match.subdir)
        found = committed_files(session.events, where)
        read_back = _median(args.runs, lambda: committed_files(session.events, where))
        anchor = _median(args.runs, lambda: replay_session(session, root, None, search))
    files = sum(len(v) for v in found.values())
    print(f"session: {path.name}, {len(session.events)} events, 29 `git commit` outputs")
    print(f"commits found: {len(found)} ({files} files read back)")
    print(f"read back: {read_back:.2f} s  |  anchor, replay_session whole: {anchor:.2f} s "
          f"({read_back / anchor:.0%} of it)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
