"""Task environments: first build and cached reuse per ecosystem, beside a plain install.

    python benchmarks/environments.py [--runs N] [--docker] [--json]

For each ecosystem a project is set up once (npm: the fixture package with one dependency and
a medium one, express with its ~70 packages; PyPI: text-unidecode, and requests with its four
dependencies) and installed from the registries:

- anchor cold: a plain ``npm ci`` / ``pip install --target`` with an empty download cache;
- anchor warm: the same again with the download cache kept (what re-installing costs);
- first build: ``trajforge``'s build into an empty environment cache (downloads included);
- reuse: the cached environment found again (what every later task with that hash pays);
- per reset: what linking it into a fresh workspace adds to each local sandbox reset;
- with ``--docker``: the derived image built once, then found again.

Times are in milliseconds, each the median of ``--runs`` (default 3) runs; registry latency
varies, so compare the columns of one run with each other, not across machines.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # for tests.fixtures

from tests.fixtures.repos import NODE_LOCK, NODE_PACKAGE
from trajforge.reconstruct.environment import detect
from trajforge.records import Environment
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments.build import NPM_FLAGS, PIP_FLAGS, ensure

RESETS = 20
EXPRESS = json.dumps({"name": "bench", "version": "1.0.0", "dependencies": {"express": "4.21.2"}})


def _lock(package: str, scratch: Path) -> dict[str, str]:
    """package.json + the package-lock.json npm resolves for it (made once, before timing)."""
    work = scratch / "lockgen"
    work.mkdir()
    (work / "package.json").write_text(package)
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--ignore-scripts", *NPM_FLAGS],
        cwd=work,
        check=True,
        capture_output=True,
    )
    return {"package.json": package, "package-lock.json": (work / "package-lock.json").read_text()}


def projects(scratch: Path) -> dict[str, dict[str, str]]:
    return {
        "npm ms (1 package)": {"package.json": NODE_PACKAGE, "package-lock.json": NODE_LOCK},
        "npm express": _lock(EXPRESS, scratch),
        "pip text-unidecode": {"requirements.txt": "text-unidecode==1.3\n"},
        "pip requests (+4)": {"requirements.txt": "requests==2.32.3\n"},
    }


def median_ms(fn: Callable[[int], object], runs: int) -> float:
    times = []
    for n in range(runs):
        start = time.perf_counter()
        fn(n)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def plain(files: dict[str, str], scratch: Path, downloads: Path) -> None:
    """The project's own install, outside trajforge."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    for rel, text in files.items():
        (work / rel).write_text(text)
    if "package.json" in files:
        argv = ["npm", "ci", "--ignore-scripts", *NPM_FLAGS, f"--cache={downloads}"]
    else:
        argv = [sys.executable, "-m", "pip", "install", "--target", str(work / "site")]
        argv += [*PIP_FLAGS, "--cache-dir", str(downloads), "-r", "requirements.txt"]
    subprocess.run(argv, cwd=work, check=True, capture_output=True)


def reset_overhead_ms(built: store.BuiltEnvironment, folder: Path, files: dict[str, str]) -> float:
    """What the environment adds to each workspace reset of a local session (the links)."""
    from trajforge.verifiers.environments.session import EnvSandbox
    from trajforge.verifiers.sandbox.local import LocalSandbox

    workspace = Path(tempfile.mkdtemp())
    for rel, text in files.items():
        (workspace / rel).write_text(text)
    plain = LocalSandbox(expose=(folder,))
    timed = {}
    for name, sandbox in (("plain", plain), ("env", EnvSandbox(plain, built.recipes, str(folder)))):
        with sandbox.session(workspace) as box:
            timed[name] = median_ms(lambda n, box=box: box.reset(workspace), RESETS)
    shutil.rmtree(workspace)
    return round(timed["env"] - timed["plain"], 1)


def measure(name: str, files: dict[str, str], runs: int, scratch: Path, docker: bool) -> dict:
    env = detect(files, None)
    assert isinstance(env, Environment), name
    row: dict[str, object] = {"project": name, "hash": env.hash[:12]}
    if "package-lock.json" in files:
        row["packages"] = len(json.loads(files["package-lock.json"])["packages"]) - 1
    row["anchor_cold_ms"] = median_ms(
        lambda n: plain(files, scratch, scratch / f"dl-{name}-{n}"), runs
    )
    warm = scratch / f"dl-{name}-warm"
    plain(files, scratch, warm)
    row["anchor_warm_ms"] = median_ms(lambda n: plain(files, scratch, warm), runs)
    roots = [scratch / f"cache-{name}-{n}" for n in range(runs)]
    row["first_build_ms"] = median_ms(lambda n: ensure(env, files, roots[n]), runs)
    row["reuse_ms"] = median_ms(lambda n: ensure(env, files, roots[0]), max(runs, 5))
    built = store.load(roots[0], env.hash)
    row["size_mb"] = round((built.size_bytes if built else 0) / 1e6, 2)
    if built is not None and built.python_packages:
        row["packages"] = len(built.python_packages)
    if built is not None:
        row["per_reset_ms"] = reset_overhead_ms(built, store.folder(roots[0], env.hash), files)
    if docker:
        from trajforge.verifiers.environments.image import env_image, remove_image

        assert built is not None
        folder = store.folder(roots[0], env.hash)
        tag, _ = env_image(built.at(folder))
        remove_image(tag)
        row["image_build_ms"] = median_ms(
            lambda n: (remove_image(tag), env_image(built.at(folder))), 1
        )
        row["image_reuse_ms"] = median_ms(lambda n: env_image(built.at(folder)), runs)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--docker", action="store_true", help="also time the derived images")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="trajforge-bench-env-"))
    try:
        rows = [
            measure(name, files, args.runs, scratch, args.docker)
            for name, files in projects(scratch).items()
        ]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    columns = list(dict.fromkeys(c for row in rows for c in row if c != "hash"))
    print(" | ".join(f"{c:>15}" for c in columns))
    for row in rows:
        print(" | ".join(f"{row.get(c, '')!s:>15}" for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
