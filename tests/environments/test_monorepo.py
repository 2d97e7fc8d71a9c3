"""A monorepo task installs only the workspace members it works in (and those they depend on),
and compiles the members others import built, from the live workspace, before every check.

``tests/fixtures/npm_workspace_build``: an npm workspace of three members, as pi-mono is:
``@mono/app`` (JavaScript, tested with ``node --test``) requires ``@mono/lib`` (TypeScript whose
``main`` is ``dist/index.js``, never committed; its build script first runs a generator that
needs the network, then ``tsc``), and ``@mono/web`` depends on a tarball from a host outside
the registries (``https://cdn.example.invalid/...``, as pi-mono's web-ui takes xlsx from
SheetJS's CDN).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sandbox.conftest import load_backend
from trajforge.protocols import Limits
from trajforge.reconstruct.environment import detect
from trajforge.reconstruct.node_workspace import compile_steps, needed_members, touched_paths
from trajforge.records import Environment, Reason
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments.build import EnvironmentProblem, ensure
from trajforge.verifiers.environments.session import EnvSandbox
from trajforge.verifiers.validate.files import write_tree

FIXTURE = Path(__file__).parents[1] / "fixtures" / "npm_workspace_build"
FILES = {p.relative_to(FIXTURE).as_posix(): p.read_text() for p in sorted(FIXTURE.rglob("*.*"))}
APP, LIB, WEB = (f"packages/{m}/package.json" for m in ("app", "lib", "web"))
CHANGED = ("packages/app/src/index.js",)


def _env(changed: tuple[str, ...], command: str | None = None) -> Environment:
    env = detect(FILES, command, (), changed)
    assert env is not None
    return env


def _package(name: str, **fields: object) -> str:
    return json.dumps({"name": name, **fields})


# --- which members, which compile steps ---------------------------------------------------


def test_a_task_inside_one_member_installs_it_and_what_it_depends_on() -> None:
    env = _env(CHANGED)
    (recipe,) = env.recipes
    assert recipe.workspaces == (APP, LIB)
    flags = "--workspace packages/app --workspace packages/lib"
    assert recipe.install == (
        f"npm ci --ignore-scripts {flags} --include-workspace-root",
        # the loader hidden TypeScript tests run under, kept to the lockfile and these members
        f"npm install --no-save --ignore-scripts --no-audit tsx@4.23.15 {flags}",
    )
    assert recipe.builds == ("cd packages/lib && tsc -p tsconfig.json",)
    assert WEB not in env.inputs and LIB in env.inputs
    assert env.hash != _env(("packages/lib/src/index.ts",)).hash  # lib alone: another install


@pytest.mark.parametrize(
    ("changed", "command"),
    [
        (("README.md",), None),  # a change outside every member
        (CHANGED, "npm run check"),  # a check at the workspace root
        ((), None),  # nothing known
    ],
)
def test_the_whole_workspace_when_the_task_reaches_beyond_its_members(
    changed: tuple[str, ...], command: str | None
) -> None:
    (recipe,) = _env(changed, command).recipes
    assert recipe.workspaces == (APP, LIB, WEB)
    assert recipe.install[0] == "npm ci --ignore-scripts"
    assert "--no-package-lock" in recipe.install[1] and "--workspace" not in recipe.install[1]
    assert recipe.builds == ("cd packages/lib && tsc -p tsconfig.json",)


def test_a_check_run_inside_a_member_counts_as_working_there() -> None:
    assert touched_paths(CHANGED, "cd packages/web && npm test") == [*CHANGED, "packages/web"]
    assert touched_paths(CHANGED, "npm test") is None
    needed = needed_members("", [APP, LIB, WEB], FILES, ["packages/web"])
    assert needed == [WEB]


def test_compile_steps_only_for_imported_members_without_their_entry() -> None:
    files = {
        "a/package.json": _package("a", dependencies={"b": "1"}, main="dist/a.js"),
        "b/package.json": _package(
            "b", dependencies={"c": "1"}, main="dist/b.js", scripts={"build": "npx tsgo -b"}
        ),
        "c/package.json": _package(
            "c", main="dist/c.js", scripts={"build": "rimraf dist && tsc -p tsconfig.build.json"}
        ),
        # imported, but its entry is committed: nothing to build
        "d/package.json": _package("d", main="index.js", scripts={"build": "tsc"}),
        "d/index.js": "",
        # imported, built by a bundler; a compiler that emits nothing is a check, not a build
        "e/package.json": _package(
            "e", main="dist/e.js", scripts={"build": "tsc --noEmit && npx rollup -c"}
        ),
        # imported, built by a script of its own: nothing it can be built with here
        "g/package.json": _package("g", main="dist/g.js", scripts={"build": "node build.mjs"}),
        "h/package.json": _package("h", main="dist/h.js", scripts={"build": "vite"}),
        "f/package.json": _package("f", dependencies={"d": "1", "e": "1", "g": "1", "h": "1"}),
    }
    members = sorted(p for p in files if p.endswith("package.json"))
    assert compile_steps("", members, files) == (
        "cd c && tsc -p tsconfig.build.json",
        "cd b && tsgo -b",
        "cd e && rollup -c",
    )
    assert needed_members("", members, files, ["f/x.js"]) == [
        "d/package.json",
        "e/package.json",
        "f/package.json",
        "g/package.json",
        "h/package.json",
    ]


def test_members_that_depend_on_each_other_do_not_loop() -> None:
    files = {
        "a/package.json": _package(
            "a", dependencies={"b": "1"}, main="dist/a.js", scripts={"build": "tsc"}
        ),
        "b/package.json": _package(
            "b", dependencies={"a": "1"}, main="dist/b.js", scripts={"build": "tsc"}
        ),
    }
    members = ["a/package.json", "b/package.json"]
    assert needed_members("", members, files, ["a/src/x.ts"]) == members
    assert sorted(compile_steps("", members, files)) == ["cd a && tsc", "cd b && tsc"]


# --- built and run for real ---------------------------------------------------------------


def _local_with(folder: Path):  # type: ignore[no-untyped-def]
    from trajforge.verifiers.sandbox.local import LocalSandbox

    load_backend("local")
    return LocalSandbox(expose=(folder,))


@pytest.mark.slow
def test_the_member_a_check_imports_is_compiled_from_the_live_workspace(tmp_path: Path) -> None:
    """The filtered install succeeds where the whole workspace's cannot (a host outside the
    registries); before each check ``@mono/lib`` is compiled from the workspace as it is then,
    so a change to its source reaches the check that imports it built."""
    whole = _env(())
    with pytest.raises(EnvironmentProblem) as caught:
        ensure(whole, FILES, tmp_path / "cache")
    assert caught.value.reason is Reason.ENVIRONMENT_UNAVAILABLE
    assert "cdn.example.invalid" in str(caught.value)
    assert not any(path.startswith("packages/lib/dist/") for path in FILES)
    _built_from_the_live_workspace(tmp_path, _env(CHANGED), FILES, ("hello", "hi"), "HI ANN")


def _built_from_the_live_workspace(
    tmp_path: Path, env: Environment, files: dict[str, str], edit: tuple[str, str], shown: str
) -> None:
    """``@mono/app``'s test passes on ``files``; with ``packages/lib/src/index.ts`` edited
    (``edit``: old, new) and the sandbox reset, it fails, printing ``shown``: the member is
    built again from the workspace as it is then."""
    ensure(env, files, tmp_path / "cache")
    folder = store.folder(tmp_path / "cache", env.hash)
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = write_tree(tmp_path / "ws", files)
    with sandbox.session(workspace, Limits(timeout_s=120)) as box:
        passed = box.run("cd packages/app && npm test")
        lib = workspace / "packages/lib/src/index.ts"
        lib.write_text(lib.read_text().replace(*edit))
        box.reset(workspace)
        failed = box.run("cd packages/app && npm test")
    assert passed.exit_code == 0, passed.stdout + passed.stderr
    assert failed.exit_code != 0 and shown in failed.stdout + failed.stderr


BUNDLED = Path(__file__).parents[1] / "fixtures" / "npm_workspace_bundled"


@pytest.mark.slow
def test_a_member_built_by_a_bundler_is_bundled_from_the_live_workspace(tmp_path: Path) -> None:
    """``tests/fixtures/npm_workspace_bundled``: ``@mono/shapes``' ``main`` is
    ``dist/index.js``, made by ``rimraf dist && tsup src/index.ts --format cjs`` (no ``tsc``
    anywhere: before bundlers were read, nothing built it and ``@mono/app``'s test failed to
    load it). The bundler step is run before each check, from the workspace as it is then."""
    files = {p.relative_to(BUNDLED).as_posix(): p.read_text() for p in BUNDLED.rglob("*.*")}
    env = detect(files, "cd packages/app && npm test", (), ("packages/app/src/index.js",))
    assert env is not None
    assert env.recipes[0].builds == ("cd packages/lib && tsup src/index.ts --format cjs",)
    _built_from_the_live_workspace(
        tmp_path, env, files, ("width * height", "width + height"), "14 !== 26"
    )
