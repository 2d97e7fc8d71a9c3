"""``trajforge reconstruct hf://datasets/ORG/NAME@REV``: sessions shared on the Hub.

The Hub is :class:`tests.support.fakehub.FakeHub`, a local server speaking the endpoints the
real ``huggingface_hub`` client calls; the CLI runs as a user runs it (``HF_ENDPOINT``,
``HF_HOME``, ``HF_TOKEN``, ``HF_HUB_OFFLINE``). The dataset is laid out as the Hub's Agent Traces
docs and pi-share-hf describe: nested folders per harness and project, one ``.jsonl`` per
session (real sessions people published, from ``../shared/corpus/real``), a pi-share-hf
``manifest.jsonl`` (not a session) and a README whose card states a licence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakehub import FakeHub
from trajforge.errors import UsageError
from trajforge.reconstruct.hub_dumps import HubRef, card_license, parse_ref

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "real"
TOKEN = "hf_" + "Qz7" * 12
REPO = "trace-donors/agent-traces"
CARD = "---\nlicense: cc-by-4.0\npretty_name: agent traces\n---\n# Agent traces\n"
LAYOUT = {  # path in the dataset → real session (harness/owner__repo/file)
    "sessions/pi/--home-dev-trl--/2026-01-05T10-00-00_trl.jsonl": "pi/rycerzes__trl/session.jsonl",
    "sessions/claude_code/-home-dev-random/8d1c.jsonl": "claude/apanloco__random/session.jsonl",
    "sessions/codex/2026/01/05/rollout-battle.jsonl": (
        "codex/CryptoSodi__Battle-Cities/codex-session.jsonl"
    ),
}
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no shared corpus at {CORPUS}")


def dump(root: Path) -> Path:
    """The dataset's files on disk, as a user who downloaded them by hand has them."""
    for rel, source in LAYOUT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((CORPUS / source).read_bytes())
    (root / "README.md").write_text(CARD)
    manifest = [{"session": rel, "reviewed": True} for rel in LAYOUT]
    (root / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    return root


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def local(tmp_path: Path) -> Path:
    return dump(tmp_path / "by-hand")


def cli(
    *args: str, hub: FakeHub | None, home: Path, offline: bool = False, token: str | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    """``trajforge reconstruct ... --json`` as a user runs it: (exit code, summary, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    endpoint = hub.endpoint if hub is not None else "http://127.0.0.1:9"  # nothing listens
    env |= {"HF_ENDPOINT": endpoint, "HF_HOME": str(home), "HF_HUB_DISABLE_XET": "1"}
    env |= {"HF_HUB_OFFLINE": "1" if offline else "0", "HF_HUB_ETAG_TIMEOUT": "2"}
    if token is not None:
        env["HF_TOKEN"] = token
    command = [sys.executable, "-m", "trajforge.cli.main", "reconstruct", *args, "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    summary = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, summary, done.stderr


def tasks(out: Path) -> dict[str, dict[str, Any]]:
    return {
        p.name: json.loads((p / "task.json").read_text())
        for p in sorted((out / "tasks").iterdir())
        if (p / "task.json").is_file()
    }


def by_hand(local: Path, out: Path, home: Path) -> dict[str, dict[str, Any]]:
    rc, summary, stderr = cli(str(local), "-o", str(out), hub=None, home=home, offline=True)
    assert rc == 0 and summary is not None, stderr
    return tasks(out)


def test_hub_inputs_are_parsed_with_revision_and_path() -> None:
    assert parse_ref("hf://datasets/org/name") == HubRef(
        text="hf://datasets/org/name", repo_id="org/name"
    )
    ref = parse_ref("hf://datasets/org/name@v1/sessions/pi")
    assert (ref.repo_id, ref.revision, ref.subpath) == ("org/name", "v1", "sessions/pi")
    ref = parse_ref("hf://datasets/org/name@refs/convert/parquet/default/train")
    assert (ref.revision, ref.subpath) == ("refs/convert/parquet", "default/train")
    assert parse_ref("hf://datasets/org/name@refs%2Fpr%2F3").revision == "refs/pr/3"
    for bad in ("hf://models/org/name", "hf://datasets/org", "hf://datasets/org/name@"):
        with pytest.raises(UsageError, match="hf://datasets/ORG/NAME"):
            parse_ref(bad)


def test_a_card_licence_is_read_from_its_yaml_header(tmp_path: Path) -> None:
    card = tmp_path / "README.md"
    card.write_text(CARD)
    assert card_license(card) == "cc-by-4.0"
    card.write_text("---\nlicense: other\nlicense_name: donors-terms\n---\n")
    assert card_license(card) == "other (donors-terms)"
    card.write_text("# no header\nlicense: mit\n")
    assert card_license(card) is None
    assert card_license(tmp_path / "absent.md") is None


def test_a_dataset_revision_gives_the_same_tasks_as_its_files_by_hand(
    hub: FakeHub, local: Path, tmp_path: Path
) -> None:
    commit = hub.put(REPO, files_of(local))
    hub.repos[REPO].tags["v1"] = commit
    hub.put(REPO, {"sessions/pi/later.jsonl": b'{"type":"session"}\n'})  # main moves on
    expected = by_hand(local, tmp_path / "by-hand-out", tmp_path / "hf")
    out = tmp_path / "out"
    rc, summary, stderr = cli(f"hf://datasets/{REPO}@v1", "-o", str(out), hub=hub,
                              home=tmp_path / "hf")  # fmt: skip
    assert rc == 0, stderr
    assert summary is not None
    got = tasks(out)
    assert expected and set(got) == set(expected)  # the same tasks, by content hash
    [row] = summary["datasets"]
    assert (row["commit"], row["files"], row["license"]) == (commit, 3, "cc-by-4.0")
    read = {i["path"] for i in summary["inputs"]}
    assert read == {f"hf://datasets/{REPO}@{commit}/{rel}" for rel in LAYOUT}  # no manifest
    for task in got.values():
        origin = task["source"]["dataset"]
        assert (origin["repo_id"], origin["revision"], origin["commit"]) == (REPO, "v1", commit)
        assert origin["path"] in LAYOUT and origin["license"] == "cc-by-4.0"
        assert task["source"]["path"] == f"hf://datasets/{REPO}@{commit}/{origin['path']}"


def test_a_path_and_globs_narrow_what_is_downloaded(
    hub: FakeHub, local: Path, tmp_path: Path
) -> None:
    hub.put(REPO, files_of(local))
    out = tmp_path / "out"
    rc, summary, stderr = cli(f"hf://datasets/{REPO}/sessions", "--exclude", "*/codex/*",
                              "-o", str(out), hub=hub, home=tmp_path / "hf")  # fmt: skip
    assert rc == 0 and summary is not None, stderr
    assert summary["sessions"] == {"pi": 1, "claude-code": 1}
    downloaded = {p for _, p in hub.requests if "/resolve/" in p}
    assert not any("codex" in p or "manifest" in p for p in downloaded), downloaded


def test_offline_the_cache_alone_gives_the_same_tasks(
    hub: FakeHub, local: Path, tmp_path: Path
) -> None:
    hub.put(REPO, files_of(local))
    home = tmp_path / "hf"
    rc, _, stderr = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "online"), hub=hub,
                        home=home)  # fmt: skip
    assert rc == 0, stderr
    rc, summary, stderr = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "offline"),
                              hub=None, home=home, offline=True)  # fmt: skip
    assert rc == 0 and summary is not None, stderr
    assert set(tasks(tmp_path / "offline")) == set(tasks(tmp_path / "online"))
    assert summary["datasets"][0]["license"] == "cc-by-4.0"
    rc, summary, _ = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "cold"), hub=None,
                         home=tmp_path / "empty-cache", offline=True)  # fmt: skip
    assert rc == 2 and summary is not None
    assert "HF_HUB_OFFLINE=1 forbids downloading" in summary["inputs"][0]["error"]
    rc, summary, _ = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "unreachable"),
                         hub=None, home=tmp_path / "empty-cache")  # fmt: skip
    assert rc == 2 and summary is not None  # online, but nothing listens at the endpoint
    error = summary["inputs"][0]["error"]
    assert "could not be reached" in error and "HF_HUB_OFFLINE" not in error


@pytest.mark.parametrize(
    ("access", "url", "expected"),
    [
        ("public", "hf://datasets/nobody/nothing", "no such dataset repository"),
        ("gated", f"hf://datasets/{REPO}", "is gated: accept its conditions"),
        ("private", f"hf://datasets/{REPO}", "if it is private, set HF_TOKEN"),
        ("public", f"hf://datasets/{REPO}@no-such-branch", "no revision 'no-such-branch'"),
    ],
)
def test_an_unreadable_dataset_says_what_to_do_and_the_rest_goes_on(
    hub: FakeHub, local: Path, tmp_path: Path, access: str, url: str, expected: str
) -> None:
    hub.put(REPO, files_of(local))
    hub.repos[REPO].access = access
    other = tmp_path / "other"
    other.mkdir()
    (other / "s.jsonl").write_bytes((local / next(iter(LAYOUT))).read_bytes())
    rc, summary, stderr = cli(url, str(other), "-o", str(tmp_path / "out"), hub=hub,
                              home=tmp_path / "hf")  # fmt: skip
    assert rc == 1 and summary is not None, stderr  # the local input was read
    [failed] = [i for i in summary["inputs"] if i["error"]]
    assert failed["path"] == url and expected in failed["error"]
    assert "Traceback" not in stderr
    if access != "public":  # with a token that can read it, the same input works
        rc, summary, stderr = cli(url, "-o", str(tmp_path / "out2"), hub=hub,
                                  home=tmp_path / "hf", token=TOKEN)  # fmt: skip
        assert rc == 0 and summary is not None and summary["datasets"][0]["files"] == 3, stderr


def test_a_revision_without_sessions_says_so(hub: FakeHub, tmp_path: Path) -> None:
    hub.put(REPO, {"README.md": CARD.encode(), "data/table.csv": b"a,b\n1,2\n"})
    rc, summary, _ = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "out"), hub=hub,
                         home=tmp_path / "hf")  # fmt: skip
    assert rc == 2 and summary is not None
    error = summary["inputs"][0]["error"]
    assert "no session files (*.jsonl, *.json, *.jsonl.gz) and no parquet" in error
    assert "--include" in error


def test_a_download_cut_off_resumes_and_keeps_what_it_had(
    hub: FakeHub, local: Path, tmp_path: Path
) -> None:
    hub.put(REPO, files_of(local))
    codex = next(rel for rel in LAYOUT if "codex" in rel)
    hub.fail(f"resolve:{codex}", times=20)  # the client retries: fail every try this run
    home = tmp_path / "hf"
    rc, summary, _ = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "out"), hub=hub,
                         home=home)  # fmt: skip
    assert rc == 2 and summary is not None
    assert "run the same command again to resume" in summary["inputs"][0]["error"]
    hub.fail(f"resolve:{codex}", times=0)
    hub._failures.clear()
    before = len(hub.requests)
    rc, summary, stderr = cli(f"hf://datasets/{REPO}", "-o", str(tmp_path / "out"), hub=hub,
                              home=home)  # fmt: skip
    assert rc == 0 and summary is not None and summary["datasets"][0]["files"] == 3, stderr
    fetched = [p for m, p in hub.requests[before:] if m == "GET" and "/resolve/" in p]
    assert fetched and all(codex in p for p in fetched), fetched  # the others were kept


def test_the_source_licence_reaches_the_dataset_card_and_manifest(
    hub: FakeHub, local: Path, tmp_path: Path
) -> None:
    from trajforge.records import DatasetManifest, load_record
    from trajforge.splits import split as split_stage

    commit = hub.put(REPO, files_of(local))
    out = tmp_path / "out"
    rc, _, stderr = cli(f"hf://datasets/{REPO}", "-o", str(out), hub=hub, home=tmp_path / "hf")
    assert rc == 0, stderr
    for folder in (out / "tasks").iterdir():  # validation's verdict is test input here
        data = json.loads((folder / "task.json").read_text())
        data["validation"]["status"] = "accepted"
        (folder / "task.json").write_text(json.dumps(data))
    count = len(list((out / "tasks").iterdir()))
    split_stage.run(out, tmp_path / "dataset")
    card = (tmp_path / "dataset" / "README.md").read_text()
    assert "\nlicense: cc-by-4.0\n" in card.split("\n---", 1)[0]
    assert f"`{REPO}`" in card and f"`{commit}`: licence `cc-by-4.0`" in card
    manifest = load_record(DatasetManifest, tmp_path / "dataset" / "manifest.json")
    [source] = manifest.sources
    assert (source.dataset, source.commit, source.license) == (REPO, commit, "cc-by-4.0")
    assert source.tasks == count

    # a dataset whose card states no licence: said in the card, no licence claimed for all
    hub.put("someone/unlicensed", {k: v for k, v in files_of(local).items() if k != "README.md"})
    out2 = tmp_path / "out2"
    rc, summary, stderr = cli("hf://datasets/someone/unlicensed", "-o", str(out2), hub=hub,
                              home=tmp_path / "hf")  # fmt: skip
    assert rc == 0 and summary is not None, stderr
    assert summary["datasets"][0]["license"] is None
    for folder in (out2 / "tasks").iterdir():
        data = json.loads((folder / "task.json").read_text())
        data["validation"]["status"] = "accepted"
        (folder / "task.json").write_text(json.dumps(data))
    split_stage.run(out2, tmp_path / "dataset2")
    card = (tmp_path / "dataset2" / "README.md").read_text()
    assert "\nlicense:" not in card.split("\n---", 1)[0]
    assert "no licence stated in its dataset card" in card


@pytest.mark.parametrize("traces", [True, False], ids=["agent-traces-rows", "line-rows"])
def test_where_the_raw_files_are_gone_the_hub_parquet_gives_the_same_tasks(
    hub: FakeHub, local: Path, tmp_path: Path, traces: bool
) -> None:
    """The Hub's conversion at refs/convert/parquet, made as the Hub makes it: ``datasets``'
    json builder over the data files (its agent-traces rows, one per file, by default; a row
    per line without them), then ``to_parquet``; ``main`` keeps only the card."""
    import datasets

    sessions = sorted(local / rel for rel in LAYOUT)
    if not traces:  # a row per line needs one set of columns: one harness per conversion
        sessions = [s for s in sessions if "/pi/" in s.as_posix()]
    table = datasets.load_dataset(
        "json",
        data_files=[str(s) for s in sessions],
        split="train",
        cache_dir=str(tmp_path / "datasets-cache"),
        parse_agent_traces=traces,
    )
    parquet = tmp_path / "0000.parquet"
    table.to_parquet(str(parquet))
    hub.put(REPO, {"README.md": CARD.encode()})
    converted = hub.put(REPO, {"default/train/0000.parquet": parquet.read_bytes()},
                        ref="refs/convert/parquet")  # fmt: skip
    hand = tmp_path / "hand"
    hand.mkdir()
    for s in sessions:
        (hand / s.name).write_bytes(s.read_bytes())
    expected = by_hand(hand, tmp_path / "by-hand-out", tmp_path / "hf")
    out = tmp_path / "out"
    rc, summary, stderr = cli(f"hf://datasets/{REPO}", "-o", str(out), hub=hub,
                              home=tmp_path / "hf")  # fmt: skip
    assert rc == 0 and summary is not None, stderr
    [row] = summary["datasets"]
    assert (row["parquet"], row["files"], row["license"]) == (
        "refs/convert/parquet",
        len(sessions),
        "cc-by-4.0",
    )
    got = tasks(out)
    assert expected and set(got) == set(expected)
    for task in got.values():
        origin = task["source"]["dataset"]
        assert (origin["revision"], origin["commit"]) == ("refs/convert/parquet", converted)
        assert origin["path"] == "default/train/0000.parquet" and origin["rows"] is not None
        assert origin["license"] == "cc-by-4.0"
