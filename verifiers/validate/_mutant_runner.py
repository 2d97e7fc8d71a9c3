"""Runs inside the sandbox: every mutant's pytest run from one process that imported pytest once.

Plan: ``.trajforge-batch/plan.json`` (cwd, pytest args, module mode, per-mutant timeout,
mutants). For each mutant the file is swapped in, a forked child runs ``pytest.main`` with
``-x`` and its own JUnit XML (tests that killed earlier mutants and tests naming the mutated
module run first), the parent waits with a timeout and kills the child's process group, then
restores the file. Results go to ``/tmp/trajforge-batch.json``. Standard library + pytest only.
"""

import contextlib
import json
import os
import shutil
import signal
import sys
import time

PLAN_DIR = ".trajforge-batch"
RESULTS = "/tmp/trajforge-batch.json"


class Order:
    """pytest plugin: killers first, then tests whose file names the mutated module."""

    def __init__(self, first, stem, killers_file):
        self.first = {name: rank for rank, name in enumerate(first)}
        self.stem = stem
        self.killers_file = killers_file

    def _mentions(self, item):
        try:
            with open(str(item.fspath), encoding="utf-8", errors="replace") as fh:
                return self.stem in fh.read()
        except OSError:
            return False

    def pytest_collection_modifyitems(self, session, config, items):
        cache = {}

        def key(item):
            path = str(item.fspath)
            if path not in cache:
                cache[path] = self._mentions(item)
            return (self.first.get(item.nodeid, len(self.first)), 0 if cache[path] else 1)

        items.sort(key=key)

    def pytest_runtest_logreport(self, report):
        if report.failed:
            with open(self.killers_file, "a", encoding="utf-8") as fh:
                fh.write(report.nodeid + "\n")


def preload_plugins():
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group="pytest11"):
        try:
            ep.load()
        except Exception:  # a broken plugin is pytest's to report in the child
            continue


def child(plan, index, mutant, first):
    import pytest

    os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.chdir(plan["cwd"])
    if plan["module_mode"]:
        sys.path[0] = os.getcwd()  # as ``python -m pytest`` does
    else:
        sys.path.pop(0)
    junit = f"/tmp/trajforge-m{index}.xml"
    os.environ["PYTEST_ADDOPTS"] = f"--junitxml={junit} -p no:cacheprovider -x"
    stem = os.path.splitext(os.path.basename(mutant["path"]))[0]
    plugin = Order(first, stem, f"/tmp/trajforge-k{index}.txt")
    code = pytest.main(list(plan["args"]), plugins=[plugin])
    sys.stdout.flush()
    os._exit(int(code))


def wait(pid, deadline):
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, True
        time.sleep(0.005)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def run_one(plan, index, mutant, first):
    target = mutant["path"]
    original = read(target)
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(mutant["content"])
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            child(plan, index, mutant, first)
        finally:
            os._exit(3)
    code, timed_out = wait(pid, start + plan["timeout"])
    wall = time.monotonic() - start
    if original is None:
        os.unlink(target)
    else:
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(original)
    killers = (read(f"/tmp/trajforge-k{index}.txt") or "").split()
    return {
        "id": mutant["id"],
        "exit_code": code,
        "timed_out": timed_out,
        "wall_s": round(wall, 4),
        "junit": read(f"/tmp/trajforge-m{index}.xml"),
        "killers": killers,
    }


def warm_up(plan):
    """Run the unmutated suite once in this process: pytest's lazy imports happen here, once.

    Returns its exit code (must be 0, or the runner does not reproduce the check). Modules
    imported from the workspace are dropped again so that every child imports them fresh.
    """
    import gc

    import pytest

    root = os.getcwd()
    saved_path, saved_fds = list(sys.path), (os.dup(1), os.dup(2))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        os.chdir(plan["cwd"])
        if plan["module_mode"]:
            sys.path.insert(0, os.getcwd())
        os.environ["PYTEST_ADDOPTS"] = "--junitxml=/tmp/trajforge-warm.xml -p no:cacheprovider"
        code = int(pytest.main(list(plan["args"])))
    finally:
        sys.stdout.flush()
        os.dup2(saved_fds[0], 1)
        os.dup2(saved_fds[1], 2)
        os.chdir(root)
        sys.path[:] = saved_path
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and os.path.abspath(path).startswith(root + os.sep):
            del sys.modules[name]
    gc.collect()
    gc.freeze()
    return code


def main():
    with open(os.path.join(PLAN_DIR, "plan.json"), encoding="utf-8") as fh:
        plan = json.load(fh)
    shutil.rmtree(PLAN_DIR)
    sys.dont_write_bytecode = True
    import pytest  # noqa: F401  (imported once, inherited by every child)

    preload_plugins()
    warm = warm_up(plan)
    first = []
    results = []
    for index, mutant in enumerate(plan["mutants"] if warm == 0 else []):
        result = run_one(plan, index, mutant, first)
        first = list(dict.fromkeys(result["killers"] + first))
        results.append(result)
    with open(RESULTS, "w", encoding="utf-8") as fh:
        json.dump({"warm_up_exit": warm, "results": results}, fh)


if __name__ == "__main__":
    main()
