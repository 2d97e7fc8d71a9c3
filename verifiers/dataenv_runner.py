"""The in-sandbox runner of a validation batch (written into the batch folder as text).

``python3 _runner.py SECONDS`` runs, for every sub-folder (one per task), ``query.py`` and
then each ``perturbed_*.py`` with ``runpy`` in that folder, and prints one JSON line per
script: ``{"task", "script", "stdout", "error", "seconds"}``. ``SECONDS`` caps each script
(SIGALRM; native code that never returns to Python is caught by the run's own timeout).
"""

from __future__ import annotations

DATA_RUNNER = r"""
import contextlib, io, json, os, runpy, signal, sys, time, traceback


def _alarm(signum, frame):
    raise TimeoutError("query ran past its time limit")


def run(folder, script, limit):
    buffer = io.StringIO()
    error = None
    start = time.perf_counter()
    os.chdir(folder)
    sys.argv = [script]
    signal.alarm(limit)
    try:
        with contextlib.redirect_stdout(buffer):
            runpy.run_path(os.path.join(folder, script), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = f"exit status {exc.code}"
    except BaseException as exc:
        error = traceback.format_exception_only(type(exc), exc)[-1].strip()
    finally:
        signal.alarm(0)
    return {"stdout": buffer.getvalue(), "error": error,
            "seconds": round(time.perf_counter() - start, 4)}


def main():
    limit = int(sys.argv[1])
    root = os.getcwd()
    signal.signal(signal.SIGALRM, _alarm)
    for task in sorted(os.listdir(root)):
        folder = os.path.join(root, task)
        if not os.path.isdir(folder):
            continue
        names = sorted(
            n for n in os.listdir(folder) if n.startswith("perturbed_") and n.endswith(".py")
        )
        for script in ["query.py", *names]:
            if not os.path.isfile(os.path.join(folder, script)):
                continue
            row = {"task": task, "script": script, **run(folder, script, limit)}
            sys.__stdout__.write(json.dumps(row) + "\n")
            sys.__stdout__.flush()


main()
"""
