"""Runs inside the sandbox: record the calls the hidden tests make into the task's code, and
observe what the code does on a list of calls. Standard library only (Python >= 3.11).

``record``: imported by the ``sitecustomize.py`` next to it (``PYTHONPATH`` points here) in every
Python process the check starts, when ``TRAJFORGE_OBSERVE`` names a plan. A profile hook notes
each call into a module-level function of a target file made from outside the target files
whose arguments are plain literals; at exit the process writes its calls, with the module each
function is reachable from, to ``<out>/<pid>.json``. ``collect OUT``: all of them as one JSON.

``observe PLAN``: import each input's module, call the function on the literal arguments with
stdout captured and a per-call time limit, and write one observation per input (what it
returned or raised, what it printed, whether it changed its arguments) to the plan's results
file; with ``trace`` also the target-file lines the calls executed.
"""

import ast
import atexit
import contextlib
import importlib
import io
import itertools
import json
import os
import signal
import sys
import threading
import types

MAX_REPR = 2000
MAX_PER_FUNCTION = 24
MAX_ITEMS = 1000
LITERAL_TYPES = (str, int, float, bool, type(None), bytes)


def literal(value, depth=0):
    """repr of ``value`` when it is a plain literal that survives a round trip, else None."""
    if depth > 6 or not _plain_ok(value, depth):
        return None
    text = repr(value)
    if len(text) > MAX_REPR:
        return None
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return text if back == value and type(back) is type(value) else None


def _plain_ok(value, depth):
    if type(value) in LITERAL_TYPES:
        return True
    if type(value) in (list, tuple, set, frozenset):
        return len(value) <= MAX_ITEMS and all(_plain_ok(v, depth + 1) for v in value)
    if type(value) is dict:
        return len(value) <= MAX_ITEMS and all(
            _plain_ok(k, depth + 1) and _plain_ok(v, depth + 1) for k, v in value.items()
        )
    return False


def plain(value, depth=0):
    """``value`` with dict / list / tuple subclasses (Counter, namedtuple) made plain."""
    if depth > 6:
        return value
    if isinstance(value, dict):
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v, depth + 1) for v in value)
    if isinstance(value, set | frozenset):
        return type(value)(plain(v, depth + 1) for v in value)
    return value


# --- record ------------------------------------------------------------------------------


class Recorder:
    def __init__(self, plan):
        self.root = os.path.realpath(plan["root"])
        self.targets = {os.path.realpath(os.path.join(self.root, t)) for t in plan["targets"]}
        self.out = plan["out"]
        self.watch = {}
        self.inside = {}
        self.calls = {}
        self.counts = {}
        self.busy = False

    def _is_target(self, code):
        known = self.inside.get(code)
        if known is None:
            known = os.path.realpath(code.co_filename) in self.targets
            self.inside[code] = known
        return known

    def _watched(self, code):
        known = self.watch.get(code)
        if known is None:
            name = code.co_name
            known = self._is_target(code) and code.co_qualname == name and not name.startswith("<")
            self.watch[code] = known
        return known

    def hook(self, frame, event, arg):
        if event != "call" or self.busy:
            return
        code = frame.f_code
        if not self._watched(code):
            return
        back = frame.f_back
        if back is not None and self._is_target(back.f_code):
            return  # a call inside the task's code, not through its interface
        self.busy = True
        try:
            self._note(code, frame)
        except Exception:
            pass
        finally:
            self.busy = False

    def _note(self, code, frame):
        if self.counts.get(code, 0) >= MAX_PER_FUNCTION:
            return
        names = code.co_varnames
        count = code.co_argcount
        pos = [frame.f_locals[n] for n in names[:count]]
        kw = {n: frame.f_locals[n] for n in names[count : count + code.co_kwonlyargcount]}
        extra = count + code.co_kwonlyargcount
        if code.co_flags & 0x04:
            pos += list(frame.f_locals[names[extra]])
            extra += 1
        if code.co_flags & 0x08:
            kw.update(frame.f_locals[names[extra]])
        args, kwargs = literal(tuple(pos)), literal(kw)
        if args is None or kwargs is None:
            return
        key = (code, args, kwargs)
        if key in self.calls:
            return
        self.calls[key] = _origin(frame, self.root)
        self.counts[code] = self.counts.get(code, 0) + 1

    def dump(self):
        sys.setprofile(None)
        threading.setprofile(None)
        rows = []
        for (code, args, kwargs), origin in self.calls.items():
            module = _module_of(code, self.root)
            if module is None:
                continue
            rel = os.path.relpath(os.path.realpath(code.co_filename), self.root)
            rows.append(
                {
                    "file": rel,
                    "function": code.co_name,
                    "module": module,
                    "args": args,
                    "kwargs": kwargs,
                    "origin": origin,
                }
            )
        here = os.path.dirname(os.path.realpath(__file__))
        paths = [
            os.path.relpath(os.path.realpath(p or "."), self.root)
            for p in sys.path
            if os.path.realpath(p or ".").startswith(self.root)
            and os.path.realpath(p or ".") != here
        ]
        os.makedirs(self.out, exist_ok=True)
        with open(os.path.join(self.out, f"{os.getpid()}.json"), "w", encoding="utf-8") as fh:
            json.dump({"calls": rows, "paths": paths}, fh)


def _origin(frame, root):
    """The test that made the call: the nearest caller whose function is named test*."""
    current = frame.f_back
    for _ in range(40):
        if current is None:
            break
        code = current.f_code
        if code.co_name.startswith("test"):
            rel = os.path.relpath(os.path.realpath(code.co_filename), root)
            return f"{rel}::{code.co_qualname}"
        current = current.f_back
    return "the hidden tests"


def _unwrap(obj):
    for _ in range(10):
        inner = getattr(obj, "__wrapped__", None)
        if inner is None:
            break
        obj = inner
    return obj


def _module_of(code, root):
    """Shortest importable module name (of the workspace's) exposing the function."""
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or not os.path.realpath(path).startswith(root + os.sep):
            continue
        obj = _unwrap(getattr(module, code.co_name, None))
        if getattr(obj, "__code__", None) is code:
            found.append(name)
    return min(found, key=lambda n: (n.count("."), len(n), n)) if found else None


def install(plan_path):
    """Start recording in this process (called from sitecustomize)."""
    with open(plan_path, encoding="utf-8") as fh:
        recorder = Recorder(json.load(fh))
    atexit.register(recorder.dump)
    sys.setprofile(recorder.hook)
    threading.setprofile(recorder.hook)


def collect(out):
    calls, paths = [], []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        with open(os.path.join(out, name), encoding="utf-8") as fh:
            doc = json.load(fh)
        calls += doc["calls"]
        paths += [p for p in doc["paths"] if p not in paths]
    json.dump({"calls": calls, "paths": paths}, sys.stdout)


# --- observe -----------------------------------------------------------------------------


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _candidates(rel, roots):
    """Module names a file may be imported as, shortest first."""
    stem = rel[:-3] if rel.endswith(".py") else rel
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = []
    for root in roots:
        prefix = [] if root in ("", ".") else root.split("/")
        if parts[: len(prefix)] != prefix:
            continue
        rest = parts[len(prefix) :]
        names += [".".join(rest[: i + 1]) for i in range(len(rest))]
    return list(dict.fromkeys(n for n in names if n))


def _resolve(item, roots, root):
    names = [item["module"]] if item.get("module") else _candidates(item["file"], roots)
    target = os.path.realpath(os.path.join(root, item["file"]))
    for name in names:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                module = importlib.import_module(name)
        except BaseException:
            continue
        func = _unwrap(getattr(module, item["function"], None))
        code = getattr(func, "__code__", None)
        if code is not None and os.path.realpath(code.co_filename) == target:
            return name, getattr(module, item["function"])
    return None, None


def _outcome(result):
    if isinstance(result, types.GeneratorType):
        result = list(itertools.islice(result, MAX_ITEMS))
    return {
        "status": "returned",
        "type": type(result).__name__,
        "repr": repr(result)[:MAX_REPR],
        "value": literal(plain(result)),
    }


def _failure(exc):
    return {
        "status": "raised",
        "type": type(exc).__name__,
        "exc_mro": [c.__name__ for c in type(exc).__mro__],
    }


def call_one(func, item, timeout):
    args, kwargs = ast.literal_eval(item["args"]), ast.literal_eval(item["kwargs"])
    before = repr((args, kwargs))
    out = io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out):
            seen = _outcome(func(*args, **kwargs))
    except _Timeout:
        seen = {"status": "timeout"}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are behaviour too
        seen = _failure(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seen["stdout"] = out.getvalue()[:MAX_REPR]
    after = repr((args, kwargs))
    seen["args_after"] = after[:MAX_REPR] if after != before else None
    return seen


class Tracer:
    def __init__(self, targets, root):
        self.targets = {os.path.realpath(os.path.join(root, t)): t for t in targets}
        self.lines = set()
        self.seen = {}

    def _rel(self, code):
        if code not in self.seen:
            self.seen[code] = self.targets.get(os.path.realpath(code.co_filename))
        return self.seen[code]

    def trace(self, frame, event, arg):
        rel = self._rel(frame.f_code)
        if rel is None:
            return None

        def local(frame, event, arg):
            if event == "line":
                self.lines.add((rel, frame.f_lineno))
            return local

        return local  # the call event's line is the def line: defaults ran at import, not now


def observe(plan_path):
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    root = os.getcwd()
    os.chdir(os.path.join(root, plan["cwd"]))
    roots = list(dict.fromkeys([plan["cwd"], *plan["paths"], "src"]))
    for rel in reversed(roots):
        sys.path.insert(0, os.path.realpath(os.path.join(root, rel)))
    signal.signal(signal.SIGALRM, _alarm)
    tracer = Tracer(plan["targets"], root) if plan.get("trace") else None
    results = {}
    for item in plan["inputs"]:
        module, func = _resolve(item, roots, root)
        if func is None:
            results[item["id"]] = {"status": "unresolved", "module": None}
            continue
        if tracer is not None:
            sys.settrace(tracer.trace)
        try:
            seen = call_one(func, item, plan["timeout"])
        finally:
            sys.settrace(None)
        seen["module"] = module
        results[item["id"]] = seen
    lines = sorted(tracer.lines) if tracer is not None else []
    with open(plan["results"], "w", encoding="utf-8") as fh:
        json.dump({"results": results, "lines": lines}, fh)


def main():
    sys.dont_write_bytecode = True
    mode, arg = sys.argv[1], sys.argv[2]
    if mode == "collect":
        collect(arg)
    elif mode == "observe":
        observe(arg)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
