"""Environments built for real from the npm and PyPI registries, cached, and used offline.

Every build here downloads (npm: ``ms``; PyPI: ``text-unidecode``, pytest), so the tests are
``slow``; the registry-free failures (lockfile out of sync, inputs changed, Python version,
crates.io) are quick.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.fixtures.repos import NODE_LOCK, NODE_PACKAGE, PYPROJECT
from tests.sandbox.conftest import load_backend
from trajforge.protocols import Limits
from trajforge.reconstruct.environment import detect
from trajforge.records import Environment, Reason
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments.build import EnvironmentProblem, ensure
from trajforge.verifiers.environments.session import EnvSandbox
from trajforge.verifiers.validate.files import write_tree

NODE_FILES = {"package.json": NODE_PACKAGE, "package-lock.json": NODE_LOCK}
PNPM_PACKAGE = json.dumps({"name": "pn", "private": True, "dependencies": {"ms": "2.1.3"}})
MS_DEPENDENCY = """    dependencies:
      ms:
        specifier: 2.1.3
        version: 2.1.3
"""


def _pnpm_lock(importers: str) -> str:
    """A pnpm 9 lockfile of ``importers`` (their YAML) that resolve ms 2.1.3, as ``corepack
    pnpm@9.15.9 install --lockfile-only`` writes it."""
    integrity = json.loads(NODE_LOCK)["packages"]["node_modules/ms"]["integrity"]
    head = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n"
    head += "  excludeLinksFromLockfile: false\n\nimporters:\n\n"
    tail = f"\npackages:\n\n  ms@2.1.3:\n    resolution: {{integrity: {integrity}}}\n\n"
    return head + importers + tail + "snapshots:\n\n  ms@2.1.3: {}\n"


PNPM_LOCK = _pnpm_lock("  .:\n" + MS_DEPENDENCY)
"""The lockfile of PNPM_PACKAGE."""
PNPM_MONO_LOCK = _pnpm_lock(
    "  .: {}\n\n  packages/app:\n    dependencies:\n      lib:\n        specifier: workspace:*\n"
    "        version: link:../lib\n      ms:\n        specifier: 2.1.3\n        version: 2.1.3\n"
    "\n  packages/lib: {}\n\n  packages/other:\n" + MS_DEPENDENCY
)
"""The lockfile of PNPM_MONO."""
PNPM_MONO = {
    "package.json": json.dumps({"name": "mono", "private": True}),
    "pnpm-workspace.yaml": 'packages:\n  - "packages/*"\n',
    "pnpm-lock.yaml": PNPM_MONO_LOCK,
    "packages/app/package.json": json.dumps(
        {"name": "app", "version": "1.0.0", "dependencies": {"lib": "workspace:*", "ms": "2.1.3"}}
    ),
    "packages/app/use.js": "console.log(require('lib').hours(2), require('ms')('2h'))\n",
    "packages/lib/package.json": json.dumps({"name": "lib", "version": "1.0.0", "main": "x.js"}),
    "packages/lib/x.js": "module.exports = { hours: (n) => `${n} hours` }\n",
    "packages/other/package.json": json.dumps(
        {"name": "other", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}}
    ),
}
"""A pnpm workspace: ``app`` imports the member ``lib`` (source only in the workspace) and
``ms``; ``other`` is a member the task does not touch."""


def _env(files: dict[str, str], command: str | None = None) -> Environment:
    env = detect(files, command)
    assert env is not None
    return env


@pytest.mark.slow
def test_npm_ci_builds_once_then_is_reused(tmp_path: Path) -> None:
    env = _env(NODE_FILES, "npm test")
    built, cached = ensure(env, NODE_FILES, tmp_path)
    assert not cached and built.hash == env.hash and built.tools["npm"]
    folder = store.folder(tmp_path, env.hash)
    assert (
        json.loads((folder / "node/node_modules/ms/package.json").read_text())["version"] == "2.1.3"
    )
    assert (folder / "build-npm.log").is_file() and not list(tmp_path.glob(f".{env.hash}.*"))
    again, cached = ensure(env, NODE_FILES, tmp_path)
    assert cached and again == built
    assert [b.hash for b, _ in store.listing(tmp_path)] == [env.hash]


@pytest.mark.slow
def test_concurrent_builders_of_one_hash_build_it_once(tmp_path: Path) -> None:
    env = _env(NODE_FILES)
    results: list[tuple[store.BuiltEnvironment, bool]] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure(env, NODE_FILES, tmp_path)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(cached for _, cached in results) == [False, True, True]
    assert len({built.built_at for built, _ in results}) == 1


@pytest.mark.slow
def test_pip_installs_the_declared_packages_for_the_sandbox_python(tmp_path: Path) -> None:
    files = {"pyproject.toml": PYPROJECT}
    env = _env(files, "python3 -m pytest -q")
    assert env.recipes[0].packages == ("text-unidecode==1.3", "pytest")
    ensure(env, files, tmp_path)
    site = store.folder(tmp_path, env.hash) / "python/site"
    assert (site / "text_unidecode").is_dir() and (site / "pytest").is_dir()


@pytest.mark.slow
def test_pnpm_through_corepack_and_its_wrapper_run_offline_in_the_sandbox(tmp_path: Path) -> None:
    files = {"package.json": PNPM_PACKAGE, "pnpm-lock.yaml": PNPM_LOCK}
    env = _env(files, "pnpm test")
    assert env.recipes[0].manager_version == "9.15.9" and env.needs == ()
    built, _ = ensure(env, files, tmp_path / "cache")
    assert built.bin == ("pnpm",) and built.tools["pnpm"] == "9.15.9"
    folder = store.folder(tmp_path / "cache", env.hash)
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "package.json").write_text(PNPM_PACKAGE)
    (workspace / "use.js").write_text("console.log(require('ms')('2h'))\n")
    with sandbox.session(workspace, Limits(timeout_s=60)) as box:
        assert box.run("pnpm --version").stdout.strip() == "9.15.9"
        ran = box.run("node use.js")
        assert ran.exit_code == 0 and ran.stdout.strip() == "7200000"
        tamper = box.run("echo x > node_modules/ms/index.js")
        assert tamper.exit_code != 0  # the environment is read-only for the code under test


@pytest.mark.slow
def test_pnpm_workspace_installs_the_needed_members_and_links_them_to_the_workspace(
    tmp_path: Path,
) -> None:
    """A task in one member of a pnpm workspace installs that member, the members it depends
    on and the root (``--filter``), not the others; the member's link to a workspace member
    points at the member's source in the sandbox's workspace, not the manifest the build saw."""
    env = detect(PNPM_MONO, "cd packages/app && node use.js", changed=["packages/app/use.js"])
    assert env is not None
    (recipe,) = env.recipes
    assert recipe.workspaces == ("packages/app/package.json", "packages/lib/package.json")
    assert recipe.install[0].endswith(
        "install --frozen-lockfile --ignore-scripts"
        " --filter '{packages/app}' --filter '{packages/lib}' --filter '{.}'"
    )
    ensure(env, PNPM_MONO, tmp_path / "cache")
    folder = store.folder(tmp_path / "cache", env.hash)
    assert (folder / "node/packages/app/node_modules/ms").exists()
    assert not (folder / "node/packages/other").exists()
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = tmp_path / "ws"
    write_tree(workspace, PNPM_MONO)
    with sandbox.session(workspace, Limits(timeout_s=60)) as box:
        ran = box.run("cd packages/app && node use.js")
    assert ran.exit_code == 0, ran.stderr
    assert ran.stdout.strip() == "2 hours 7200000"


def _local_with(folder: Path):  # type: ignore[no-untyped-def]
    from trajforge.verifiers.sandbox.local import LocalSandbox

    load_backend("local")
    return LocalSandbox(expose=(folder,))


def test_npm_ci_against_a_lockfile_out_of_sync_is_build_failed(tmp_path: Path) -> None:
    package = json.dumps({"name": "nodecalc", "version": "1.2.0", "dependencies": {"ms": "2.1.2"}})
    files = {"package.json": package, "package-lock.json": NODE_LOCK}
    with pytest.raises(EnvironmentProblem) as caught:
        ensure(_env(files), files, tmp_path)
    assert caught.value.reason is Reason.ENVIRONMENT_BUILD_FAILED
    assert str(caught.value).startswith("environment_build_failed: `npm ci --ignore-scripts")
    assert "in sync" in str(caught.value) or "lock" in str(caught.value)
    assert store.listing(tmp_path) == [] and not list(tmp_path.glob(".*.*"))


def test_files_changed_since_the_recipe_are_build_failed(tmp_path: Path) -> None:
    env = _env(NODE_FILES)
    changed = {**NODE_FILES, "package-lock.json": NODE_LOCK.replace("2.1.3", "2.1.2")}
    with pytest.raises(EnvironmentProblem, match=r"package-lock\.json is changed since"):
        ensure(env, changed, tmp_path)
    with pytest.raises(EnvironmentProblem, match=r"package\.json is missing"):
        ensure(env, {"package-lock.json": NODE_LOCK}, tmp_path)


@pytest.mark.slow
def test_a_release_that_does_not_exist_is_build_failed(tmp_path: Path) -> None:
    files = {"requirements.txt": "text-unidecode==999.0\n"}
    with pytest.raises(EnvironmentProblem) as caught:
        ensure(_env(files), files, tmp_path)
    assert caught.value.reason is Reason.ENVIRONMENT_BUILD_FAILED
    assert "pip install" in str(caught.value) and "text-unidecode" in str(caught.value)


def test_another_python_is_environment_unavailable(tmp_path: Path) -> None:
    env = _env({"requirements.txt": "six\n"})
    recipe = env.recipes[0].model_copy(update={"python": "3.99"})
    other = env.model_copy(update={"recipes": (recipe,)})
    with pytest.raises(EnvironmentProblem) as caught:
        ensure(other, {"requirements.txt": "six\n"}, tmp_path)
    assert str(caught.value).startswith("environment_unavailable: python3.99: ")
    assert "fix: run trajforge" in str(caught.value)


def test_rust_needs_crates_io_and_says_so(tmp_path: Path) -> None:
    """crates.io is not reachable from the machines this runs on; with it, Rust is still
    named unsupported (never an oracle failure with exit 127)."""
    files = {
        "Cargo.toml": '[package]\nname = "x"\n\n[dependencies]\nserde = "1"\n',
        "Cargo.lock": "",
    }
    with pytest.raises(EnvironmentProblem) as caught:
        ensure(_env(files, "cargo test"), files, tmp_path)
    message = str(caught.value)
    assert caught.value.reason is Reason.ENVIRONMENT_UNAVAILABLE
    assert message.startswith("environment_unavailable: cargo: ") and "; fix: " in message


WORKSPACE_FIXTURE = Path(__file__).parents[1] / "fixtures" / "npm_workspace"
"""An npm workspace: @mono/b depends on its sibling @mono/a and on ms 2.1.2 (not hoisted: the
root has ms 2.1.3 for @mono/a). Lockfile written by ``npm install --package-lock-only``."""


@pytest.mark.slow
def test_npm_workspaces_install_their_members_and_link_them_live(tmp_path: Path) -> None:
    """Members' manifests are installed with the root lockfile; a member's import of its
    sibling reaches the sibling's code in the workspace (not a copy of its manifest), and a
    member's own non-hoisted dependency is its own version."""
    files = {
        p.relative_to(WORKSPACE_FIXTURE).as_posix(): p.read_text()
        for p in sorted(WORKSPACE_FIXTURE.rglob("*.json"))
    }
    env = _env(files)
    assert env.recipes[0].workspaces == ("packages/a/package.json", "packages/b/package.json")
    assert set(env.inputs) == set(files)
    ensure(env, files, tmp_path / "cache")
    folder = store.folder(tmp_path / "cache", env.hash)
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = write_tree(tmp_path / "ws", files)
    (workspace / "packages/a/index.js").write_text("module.exports = () => 'live a';\n")
    (workspace / "packages/b/index.js").write_text(
        "console.log(require('@mono/a')(), require('ms/package.json').version)\n"
    )
    with sandbox.session(workspace, Limits(timeout_s=60)) as box:
        ran = box.run("cd packages/b && node index.js")
    assert ran.exit_code == 0, ran.stderr
    assert ran.stdout.strip() == "live a 2.1.2"


def test_a_dependency_from_an_unreachable_host_is_environment_unavailable() -> None:
    """As pi-mono's web-ui: a tarball URL outside the registries (xlsx from the vendor's CDN)
    cannot be fetched here, nor dark-factory's git dependency; the rejection names it and is
    not blamed on the build."""
    import subprocess

    from trajforge.verifiers.environments.build import _failed

    stderr = (
        "npm error code ENOTFOUND\nnpm error network request to "
        "https://cdn.example.invalid/xlsx-0.20.3/xlsx-0.20.3.tgz failed, reason: getaddrinfo "
        "ENOTFOUND cdn.example.invalid\nnpm error A complete log of this run can be found in: "
        "/x/debug-0.log\n"
    )
    done = subprocess.CompletedProcess(["npm", "ci"], 1, "", stderr)
    problem = _failed("npm ci", done)
    assert problem.reason == Reason.ENVIRONMENT_UNAVAILABLE
    assert "https://cdn.example.invalid/xlsx-0.20.3/xlsx-0.20.3.tgz" in str(problem)
    # dark-factory's core: a git dependency (git+ssh://git@github.com/…) npm reads with git
    git = (
        "npm error code 128\nnpm error An unknown git error occurred\nnpm error command git "
        "--no-replace-objects ls-remote ssh://git@github.invalid/victoryforphil/elysia-protobuf"
        ".git\nnpm error ssh: Could not resolve hostname github.invalid: Name or service not "
        "known\nnpm error fatal: Could not read from remote repository.\n"
    )
    problem = _failed("npm install", subprocess.CompletedProcess(["npm"], 128, "", git))
    assert problem.reason == Reason.ENVIRONMENT_UNAVAILABLE, problem
    assert (
        "needs ssh://git@github.invalid/victoryforphil/elysia-protobuf.git, and "
        "github.invalid cannot be reached" in str(problem)
    )
    missing = (
        "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nopkg - "
        "Not found\nnpm error 404\nnpm error A complete log of this run can be found in: /x\n"
    )
    failed = _failed("npm ci", subprocess.CompletedProcess(["npm", "ci"], 1, "", missing))
    assert failed.reason == Reason.ENVIRONMENT_BUILD_FAILED
    assert str(failed).endswith(
        "npm error 404 Not Found - GET https://registry.npmjs.org/nopkg - Not found"
    )


@pytest.mark.slow
def test_a_tarball_from_an_unreachable_host_is_the_registrys_release_and_says_so(
    tmp_path: Path,
) -> None:
    """As pi-mono's web-ui (``"xlsx": "https://cdn.sheetjs.com/…tgz"``): the manifest and the
    lockfile take a package from a host that cannot be reached; the registry has the name, so
    the environment installs its release, records the swap, and the check's import works. A
    git dependency is never swapped (a fork at a commit)."""
    url = "https://cdn.example.invalid/ms-2.1.3.tgz"
    files = {
        "package.json": NODE_PACKAGE.replace('"ms": "2.1.3"', f'"ms": "{url}"'),
        "package-lock.json": NODE_LOCK.replace('"ms": "2.1.3"', f'"ms": "{url}"').replace(
            "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz", url
        ),
    }
    env = _env(files, "npm test")
    built, _ = ensure(env, files, tmp_path)
    assert len(built.substituted) == 1, built.substituted
    assert built.substituted[0].startswith("ms 2.")
    assert f"for {url} (cdn.example.invalid cannot be reached)" in built.substituted[0]
    folder = store.folder(tmp_path, env.hash)
    assert (folder / "node/node_modules/ms/package.json").is_file()
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = write_tree(tmp_path / "ws", {**files, "use.js": "console.log(require('ms')('2h'))"})
    with sandbox.session(workspace, Limits(timeout_s=60)) as box:
        ran = box.run("node use.js")
    assert (ran.exit_code, ran.stdout.strip()) == (0, "7200000"), ran.stderr
    git = "git+ssh://git@github.invalid/someone/ms.git#abc1234"
    forked = {"package.json": NODE_PACKAGE.replace('"ms": "2.1.3"', f'"ms": "{git}"')}
    forked["package-lock.json"] = NODE_LOCK.replace('"ms": "2.1.3"', f'"ms": "{git}"')
    with pytest.raises(EnvironmentProblem) as raised:
        ensure(_env(forked, "npm test"), forked, tmp_path)
    assert raised.value.reason == Reason.ENVIRONMENT_UNAVAILABLE
    said = str(raised.value)
    assert "`npm ci " in said and "github.invalid cannot be reached" in said


def test_pnpm_workspace_without_a_task_in_one_member_installs_every_member() -> None:
    """The root's package.json names no dependency: pnpm-workspace.yaml makes it the root."""
    env = detect(PNPM_MONO, "pnpm -r test")
    assert env is not None
    (recipe,) = env.recipes
    assert recipe.manager == "pnpm" and len(recipe.workspaces) == 3
    assert "--filter" not in recipe.install[0]


BUN_APP = {
    "core/package.json": json.dumps(
        {
            "name": "@app/core",
            "private": True,
            "scripts": {"dev": "bun run --watch src/index.ts"},
            "dependencies": {"ms": "2.1.3"},
        }
    ),
    "core/src/hours.ts": 'import ms from "ms";\nexport const hours = (n: number) => ms(`${n}h`);\n',
}
"""A Bun app as dark-factory's core is one: no lockfile, no test runner, scripts run by bun."""


@pytest.mark.slow
def test_a_bun_package_gets_bun_and_its_hidden_tests_run_with_bun_test(tmp_path: Path) -> None:
    """The hidden tests of a package that runs on Bun run with `bun test` (under node its
    `Bun.serve` and `bun:` modules do not exist); Bun's binary comes from the registry into the
    environment, since the `bun` package's own postinstall is never run."""
    from trajforge.verifiers.languages.typescript import TypeScript

    test = "core/src/hours.hidden.test.ts"
    command = TypeScript().test_command([test], BUN_APP)
    assert command == "cd core && bun test src/hours.hidden.test.ts"
    env = _env(BUN_APP, command)
    assert any("@oven/bun-linux-x64@" in line for line in env.recipes[0].install)
    ensure(env, BUN_APP, tmp_path / "cache")
    folder = store.folder(tmp_path / "cache", env.hash)
    sandbox = EnvSandbox(_local_with(folder), env.recipes, str(folder))
    workspace = write_tree(tmp_path / "ws", BUN_APP)
    (workspace / test).write_text(
        'import { expect, test } from "bun:test";\nimport { hours } from "./hours";\n'
        'test("two hours", () => { expect(typeof Bun.serve).toBe("function");'
        " expect(hours(2)).toBe(7200000); });\n"
    )
    with sandbox.session(workspace, Limits(timeout_s=60)) as box:
        ran = box.run(command)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert "1 pass" in ran.stdout + ran.stderr
