"""Executors: where per-item work runs (``--executor local|ray``, ``-j N``).

A command turns its work into a sequence of picklable items and one module-level function,
hands both to ``Executor.map`` and gets back one :class:`~trajforge.protocols.WorkOutcome` per
item as each finishes. The driver (the command) keeps every side effect on OUT — writing task
folders, the cache, the summary — so output files, ids and resumability do not depend on the
executor.

- ``local``: ``-j 1`` (the default) runs items inline in this process; ``-j N`` runs them in a
  :class:`concurrent.futures.ProcessPoolExecutor` of N processes.
- ``ray``: one Ray task per item (:mod:`trajforge.executors_ray`, imported lazily).

A failing item is retried ``retries`` times, then reported with reason ``Status.ERROR``. When a pool
worker process dies, every item in flight at that moment is re-run alone, so the crash is
charged to the item that caused it and never to its neighbours.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import UsageError
from trajforge.protocols import Executor, WorkOutcome
from trajforge.records import Status
from trajforge.registry import EXECUTORS, resolve

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_RETRIES = 2


class ExecutorConfig(BaseModel):
    """How an executor runs work items."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    jobs: int = Field(default=1, ge=1)
    """local: worker processes (1 = inline, no pool); ray: ignored (the cluster decides)."""
    address: str | None = None
    """ray: cluster address for ``ray.init``; None → ``RAY_ADDRESS`` or a new local instance."""
    retries: int = Field(default=DEFAULT_RETRIES, ge=0)
    """Extra attempts for an item whose function raised or whose worker died."""
    start_method: Literal["fork", "spawn", "forkserver"] | None = None
    """local pool: how worker processes start (None: the platform default). Work that uses
    a library with its own thread pool (polars) needs ``spawn``: a forked child deadlocks."""


def make_executor(name: str, config: ExecutorConfig) -> Executor:
    """The registered executor ``name``; unknown or unusable ones raise :class:`UsageError`."""
    executor: Executor = resolve(EXECUTORS, name, "executor")(config)
    reason = executor.available()
    if reason is not None:
        raise UsageError(f"executor {name!r} is not usable here: {reason}")
    return executor


def describe(exc: BaseException) -> str:
    """``ExceptionType: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def accepted(index: int, value: R, attempts: int) -> WorkOutcome[R]:
    return WorkOutcome(index=index, reason=Status.ACCEPTED, value=value, attempts=attempts)


def failed(index: int, error: str, attempts: int) -> WorkOutcome[R]:
    log.warning("work item %d failed after %d attempt(s): %s", index, attempts, error)
    return WorkOutcome(index=index, reason=Status.ERROR, error=error, attempts=attempts)


class LocalExecutor:
    """Items inline (``jobs == 1``) or in a process pool of ``jobs`` processes."""

    name = "local"

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        self.config = config or ExecutorConfig()

    def available(self) -> str | None:
        return None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[WorkOutcome[R]]:
        if self.config.jobs <= 1 or len(items) <= 1:
            for index, item in enumerate(items):
                yield _inline(fn, item, index, self.config.retries)
        else:
            yield from _PoolRun(fn, items, self.config).outcomes()

    def close(self) -> None:
        """Nothing to release: each ``map`` call owns (and shuts down) its pool."""


def _inline(fn: Callable[[T], R], item: T, index: int, retries: int) -> WorkOutcome[R]:
    error = ""
    for attempt in range(1, retries + 2):
        try:
            value = fn(item)
        except Exception as exc:  # any failure of the item function is this item's outcome
            error = describe(exc)
            log.info("work item %d attempt %d failed: %s", index, attempt, error)
            continue
        return accepted(index, value, attempt)
    return failed(index, error, retries + 1)


class _PoolRun(Generic[T, R]):
    """One ``map`` over a process pool: bounded in-flight window, retries, crash isolation."""

    def __init__(self, fn: Callable[[T], R], items: Sequence[T], config: ExecutorConfig) -> None:
        self.fn, self.items, self.config = fn, items, config
        self.window = config.jobs * 2
        self.pending: deque[int] = deque(range(len(items)))
        self.attempts = [0] * len(items)
        self.suspects: set[int] = set()  # in flight when a worker died: next run is alone
        self.inflight: dict[Future[R], int] = {}

    def outcomes(self) -> Iterator[WorkOutcome[R]]:
        pool = self._pool()
        try:
            while self.pending or self.inflight:
                if not self._fill(pool) and not self.inflight:
                    pool.shutdown(wait=True, cancel_futures=True)  # broke between two waits
                    pool = self._pool()
                    continue
                done, _ = wait(self.inflight, return_when=FIRST_COMPLETED)
                if any(_broke(f) for f in done):
                    yield from self._after_crash()
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = self._pool()
                    continue
                for future in done:
                    outcome = self._settle(self.inflight.pop(future), future)
                    if outcome is not None:
                        yield outcome
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _pool(self) -> ProcessPoolExecutor:
        method = self.config.start_method
        context = multiprocessing.get_context(method) if method else None
        return ProcessPoolExecutor(max_workers=self.config.jobs, mp_context=context)

    def _fill(self, pool: ProcessPoolExecutor) -> bool:
        """Submit pending items up to the window; False when the pool broke meanwhile (the
        crashed item's future is then among those in flight, or it already was)."""
        if any(i in self.suspects for i in self.inflight.values()):
            return True  # a suspect runs alone
        while self.pending and len(self.inflight) < self.window:
            index = self.pending[0]
            solo = index in self.suspects
            if solo and self.inflight:
                return True
            try:
                future = pool.submit(self.fn, self.items[index])
            except BrokenProcessPool:  # a worker died after the last wait returned
                return False
            self.pending.popleft()
            self.inflight[future] = index
            if solo:
                return True
        return True

    def _settle(self, index: int, future: Future[R]) -> WorkOutcome[R] | None:
        """The outcome of a finished future, or None when the item was queued again."""
        self.attempts[index] += 1
        exc = future.exception()
        if exc is None:
            self.suspects.discard(index)
            return accepted(index, future.result(), self.attempts[index])
        return self._retry_or_fail(index, describe(exc))

    def _retry_or_fail(self, index: int, error: str) -> WorkOutcome[R] | None:
        if self.attempts[index] <= self.config.retries:
            log.info("work item %d attempt %d failed: %s", index, self.attempts[index], error)
            self.pending.appendleft(index)
            return None
        self.suspects.discard(index)
        return failed(index, error, self.attempts[index])

    def _after_crash(self) -> Iterator[WorkOutcome[R]]:
        """A worker died: charge it to the item when it ran alone, else isolate everyone."""
        wait(self.inflight)  # the broken pool fails every remaining future promptly
        crashed = [i for f, i in self.inflight.items() if _broke(f)]
        finished = [(i, f) for f, i in self.inflight.items() if not _broke(f)]
        self.inflight.clear()
        for index, future in finished:
            outcome = self._settle(index, future)
            if outcome is not None:
                yield outcome
        if len(crashed) == 1:
            index = crashed[0]
            self.attempts[index] += 1
            self.suspects.add(index)
            outcome = self._retry_or_fail(index, "worker process died (BrokenProcessPool)")
            if outcome is not None:
                yield outcome
            return
        log.info("a worker died with %d items in flight; re-running each alone", len(crashed))
        self.suspects.update(crashed)
        self.pending.extendleft(sorted(crashed, reverse=True))


def _broke(future: Future[R]) -> bool:
    return isinstance(future.exception(), BrokenProcessPool)
