"""A real Bun task from other people's data: dark-factory's core (``../shared/corpus/real/
opencode/victoryforphil__dark-factory``), an Elysia app that runs on Bun ("dev": "bun run
--watch src/index.ts", ``Bun.env`` in its config). "Refactor `core/src/index.ts` to use our
`core/src/config.ts`" used to fail on its own reference under node (``oracle_fails``): the
package runs on Bun, so its hidden tests run with ``bun test``, and Bun's binary comes from the
registry into the task's environment. Proven from the answers keyed by the exact requests
(``tests/teacher/cassettes/real/corpus``); verify scores the start, the routes answered with
constants and a ``bunfig.toml`` that points the runner elsewhere 0, the reference and an entry
point written unlike it (``tests/fixtures/real_ts``) 1. The same session's other tasks (the
entry point logging through the shared module, the structured startup line, the scaffolded
core app made part of the repository) are kept 0/1 the same way.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.validate.conftest import node_env_cache
from tests.validate.test_real_typescript import (
    Overlay,
    _keyed,
    _proven_in,
    _zero_then_one,
    fixture_overlay,
)
from trajforge.oracles.stub import stub_source
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.repos import RepoSearch
from trajforge.verifiers.validate.files import read_tree

CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"
SESSION = (
    CORPUS / "real" / "opencode" / "victoryforphil__dark-factory"
    / "session__crisp-garden__ses_39bc72f63ffeQb8egYBpyTrCNr.json"
)  # fmt: skip
BUNDLE = CORPUS / "repos" / "victoryforphil__dark-factory.bundle"
TASK = "extend-f7b209126ce5cf03"
INDEX = "core/src/index.ts"
UNLIKE = Path(__file__).parents[1] / "fixtures" / "real_ts" / "dark-factory-index.unlike.ts"
CONSTANTS = """import { Elysia } from "elysia";

new Elysia()
  .get("/", () => ({ service: "dark-factory-core", status: "ok",
    message: "Dark Factory core is running", concepts: ["world", "env", "actor"],
    env: "development" }))
  .get("/health", () => ({ status: "ok" }))
  .listen({ hostname: "127.0.0.1", port: 4150 });
"""
"""The routes answered with the values config.ts happens to default to, config never read."""
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def reconstructed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not SESSION.is_file() or not BUNDLE.is_file():
        pytest.skip(f"SKIPPED: the shared corpus (dark-factory session, bundle) is not at {CORPUS}")
    tools = ("node", "npm", "git")
    with node_env_cache(tmp_path_factory, tools, "the real Bun task test"):
        repos = tmp_path_factory.mktemp("bun-repos")
        clone = ["git", "clone", "-q", str(BUNDLE), str(repos / "dark-factory")]
        subprocess.run(clone, check=True, timeout=600)
        out = tmp_path_factory.mktemp("bun-out")
        spec = pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(repos),)))
        pipeline.run([SESSION], out, spec)
        yield out


def test_a_bun_app_is_proven_with_bun_test_and_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    task_dir, task, result = _keyed(reconstructed, TASK, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert task.verifier.command == "cd core && bun test src/index.hidden.test.ts"
    assert task.environment is not None
    assert any("@oven/bun-linux-x64@" in i for i in task.environment.recipes[0].install)
    assert task.validation.status == "accepted", task.validation.reasons
    assert "config" in task.instruction and "hidden" not in task.instruction.lower()
    wrong = {
        "nothing": {},
        "constants": {INDEX: CONSTANTS},
        "runner config": {"core/bunfig.toml": '[test]\nroot = "./nothing"\n'},
    }
    _zero_then_one(task_dir, tmp_path, wrong, {INDEX: UNLIKE.read_text()})


# --- two later requests of the same session, accepted since session 20 ----------------------

LOGGING = "extend-e602337c047e844a"  # extend-8980cce3 before its correction joined it
STRUCTURED = "extend-6a8f00a78eb97cd4"
HIDDEN = "core/src/index.hidden.test.ts"
RUNNER_HACK = {"core/bunfig.toml": '[test]\nroot = "./nothing"\n', HIDDEN: 'import "bun:test";\n'}
"""The runner pointed elsewhere, and the hidden test emptied (its own, set aside at verify)."""
LOGGER_FIXTURES = "dark-factory-logger"
"""``tests/fixtures/real_ts/dark-factory-logger/{console,main-only,unlike}``: the entry point of
two wrong solutions and a rewrite of the logging task (a helper's, each scored before kept)."""
JOINED_LOG = (
    "const meta = [`env=${config.env}`, `host=${config.http.address_listen}`,\n"
    '  `port=${config.http.address_port}`].join(", ");\n'
    'logger.info(["Core", "HTTP", `Server listening (${meta})`].join(" // "));\n'
)
"""The structured startup line joined from its parts (the reference writes it in one string)."""


def _bun_zero_then_one(
    task_dir: Path, tmp_path: Path, wrong: dict[str, Overlay], rewrite: Overlay
) -> None:
    """The start, each of ``wrong`` and the runner hacks (files laid over the start) score 0;
    the start with ``rewrite`` laid over it, and the oracle, 1."""
    hacks = {path: {path: text} for path, text in RUNNER_HACK.items()}
    _zero_then_one(task_dir, tmp_path, {"nothing": {}, **wrong, **hacks}, rewrite)


def test_the_entry_point_logging_through_the_shared_module_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """ "Update to use core/src/logging.ts", then "Undo those logger chantges. just import it and
    use the logger provided such as logger.info": one task since session 29 (apart, the first
    was accepted pinning the custom logger the person then had undone, and the correction was
    dropped), proven in two rounds. The start, the entry point still announcing itself with
    ``console.log``, one that starts the server only when run as the main module, and the
    runner hacks score 0; the reference and a rewrite (named route handlers, an error hook,
    the startup line with its metadata) 1. (A ``const { info } = logger`` taken at import,
    which the instruction forbids, scores 1: the tests spy on the logger before importing.)"""
    task_dir, task, result = _keyed(reconstructed, LOGGING, tmp_path)
    _proven_in(task, result, 2)
    assert "logger.info" in task.instruction and "hidden" not in task.instruction.lower()
    oracle = read_tree(task_dir / "oracle")
    shared = {path: oracle[path] for path in ("core/src/logging.ts", "core/package.json")}

    def entry(kind: str) -> Overlay:
        return {**shared, **fixture_overlay(f"{LOGGER_FIXTURES}/{kind}")}

    wrong = {"console.log": entry("console"), "listens only as main": entry("main-only")}
    rewrite = entry("unlike")
    _bun_zero_then_one(task_dir, tmp_path, wrong, rewrite)


def test_the_structured_startup_line_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """ "… log messages should follow: System // Optional Sub system // Message (Metadata)":
    proven in two rounds. The start, the format without its metadata and a line with an empty
    segment score 0, as do the runner hacks; the reference and a line joined from its parts
    and written to the console 1."""
    task_dir, task, result = _keyed(reconstructed, STRUCTURED, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert task.validation.status == "accepted", task.validation.reasons
    assert "System // Optional Sub system // Message (Metadata)" in task.instruction
    oracle = read_tree(task_dir / "oracle")
    head = oracle[INDEX][: oracle[INDEX].index("logger.info(")]
    bare = head + 'logger.info("Core // HTTP // Listening");\n'
    empty = head + "logger.info(`Core //  // Listening (port=${config.http.address_port})`);\n"
    wrong = {"no metadata": {INDEX: bare}, "an empty segment": {INDEX: empty}}
    _bun_zero_then_one(task_dir, tmp_path, wrong, {INDEX: head + JOINED_LOG})


# --- the scaffolded core app made part of the repository (its README, routes and PORT) -------

CORE = "extend-edd361699b0b69d2"
SCAFFOLD = 'const app = new Elysia().get("/", () => "Hello Elysia").listen(3000);\n'
"""The scaffold's one route and its hard-coded port, in the start's entry point."""
ABOUT = '  .get("/", () => ({ service: "dark-factory-core", summary: "world, env, actor APIs" }))\n'
HEALTH = '  .get("/health", () => ({ status: "ok" }))\n'
PORT = "Number(Bun.env.PORT ?? 3000)"
CORE_UNLIKE = """const declared = process.env.PORT;
const port = declared === undefined ? 3000 : Number(declared);

const about = Object.freeze({
  name: "dark-factory core",
  summary: "HTTP service behind the world, env and actor APIs",
  endpoints: { "/": "this description", "/health": "liveness check" },
});

export const app = new Elysia()
  .get("/health", () => new Response("ok"))
  .get("/", () => about);

app.listen({ hostname: "0.0.0.0", port });
"""
"""The routes unlike the reference: the port read by an explicit ``undefined`` test, a frozen
description with nested endpoints, a plain-text health check, all interfaces bound."""


def _core_app(start: str, routes: str, port: str = PORT, head: str = "") -> dict[str, str]:
    """The start's entry point with the scaffold's app replaced by ``routes`` on ``port``."""
    assert start.count(SCAFFOLD) == 1
    app = f"{head}const app = new Elysia()\n{routes}  .listen({port});\n"
    return {INDEX: start.replace(SCAFFOLD, app)}


def _core_wrong(start: dict[str, str], oracle: dict[str, str]) -> dict[str, dict[str, str]]:
    """The wrong solutions (files laid over the start): the docs alone, and apps that break one
    rule each of the port, the description and the routes."""
    index = start[INDEX]
    counted = '  .get("/", () => ({ service: "dark-factory-core", served: ++served }))\n'
    echoed = '  .get("/", ({ query }) => ({ service: "dark-factory-core", query }))\n'
    blank = '  .get("/", () => ({ service: "core", endpoints: [{ path: "/", note: " " }] }))\n'
    return {
        "docs only": {p: oracle[p] for p in ("core/README.md", "core/package.json")},
        "an || fallback": _core_app(index, ABOUT + HEALTH, "Number(Bun.env.PORT || 3000)"),
        "a request counter": _core_app(index, counted + HEALTH, head="let served = 0;\n"),
        "the query echoed": _core_app(index, echoed + HEALTH),
        "a blank nested field": _core_app(index, blank + HEALTH),
        "a catch-all": _core_app(index, ABOUT + HEALTH + '  .get("*", () => ({ status: "ok" }))\n'),
    }


def test_the_core_app_of_the_repository_scores_zero_then_one(
    reconstructed: Path, tmp_path: Path
) -> None:
    """ "Update the newly made `core` Elysia Bun app with the context of this repo": the README,
    the routes ``/`` and ``/health`` and ``PORT``, an empty one meaning port 0. The start, the
    stub, the hidden test emptied, a ``bunfig.toml`` that points the runner elsewhere, the docs
    alone, an ``||`` fallback, a request counter, the query echoed, a blank nested field and a
    catch-all route score 0; the reference and an entry point written unlike it 1."""
    task_dir, task, result = _keyed(reconstructed, CORE, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.verifier.command == "cd core && bun test src/index.hidden.test.ts"
    assert "process.env.PORT ?? 3000" in task.instruction and "GET /health" in task.instruction
    assert "hidden" not in task.instruction.lower()
    start, oracle = read_tree(task_dir / "workspace"), read_tree(task_dir / "oracle")
    index, wrong = start[INDEX], _core_wrong(start, oracle)
    stub = stub_source(INDEX, oracle[INDEX])
    assert stub is not None
    rewrite = {INDEX: index.replace(SCAFFOLD, CORE_UNLIKE)}
    _bun_zero_then_one(task_dir, tmp_path, {"stub": {INDEX: stub}, **wrong}, rewrite)
