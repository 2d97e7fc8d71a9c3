"""The Ray executor: one Ray task per work item (``--executor ray``; needs the ``[ray]`` extra).

``ray`` is imported only when work starts, so this module loads without it. The cluster is
``--ray-address`` (:attr:`ExecutorConfig.address`), else ``RAY_ADDRESS``; with neither, a local
single-node Ray instance starts for the run and stops at :meth:`RayExecutor.close`. When the
calling process is already connected to Ray (``ray.is_initialized()``), that connection is used
and left open.

Every node needs the same trajforge installed (or a Ray ``runtime_env`` that provides it): the
item function travels by reference (module and name), items and results by pickle. Ray's own
task retries are off (``max_retries=0``): this executor resubmits a failed item itself — for an
exception in the function and for a worker that died alike — up to ``retries`` times, then
yields it with reason ``Status.ERROR``. Results stream back as they complete (``ray.wait``), with at
most a bounded window of tasks in flight so a huge corpus is not submitted all at once.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

from trajforge.executors import ExecutorConfig, accepted, describe, failed
from trajforge.protocols import WorkOutcome

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

MIN_WINDOW = 8
TASKS_PER_CPU = 4


class RayExecutor:
    """Items as Ray tasks on a cluster (or a local Ray instance started for the run)."""

    name = "ray"

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        self.config = config or ExecutorConfig()
        self._started = False

    def available(self) -> str | None:
        try:
            importlib.import_module("ray")
        except ImportError as exc:
            return f"ray is not installed ({exc}); install the extra: pip install 'trajforge[ray]'"
        return None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[WorkOutcome[R]]:
        if not items:
            return
        ray = self._connect()
        remote = ray.remote(max_retries=0, num_cpus=1)(fn)
        window = max(MIN_WINDOW, TASKS_PER_CPU * int(ray.cluster_resources().get("CPU", 1)))
        pending: deque[int] = deque(range(len(items)))
        attempts = [0] * len(items)
        inflight: dict[Any, int] = {}
        while pending or inflight:
            while pending and len(inflight) < window:
                index = pending.popleft()
                inflight[remote.remote(items[index])] = index
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                index = inflight.pop(ref)
                attempts[index] += 1
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    error = _ray_error(exc)
                    if attempts[index] <= self.config.retries:
                        log.info("item %d attempt %d failed: %s", index, attempts[index], error)
                        pending.appendleft(index)
                        continue
                    yield failed(index, error, attempts[index])
                else:
                    yield accepted(index, value, attempts[index])

    def close(self) -> None:
        """Stop the local Ray instance this executor started (a joined cluster keeps running)."""
        if self._started:
            ray = importlib.import_module("ray")
            ray.shutdown()
            self._started = False

    def _connect(self) -> ModuleType:
        ray = importlib.import_module("ray")
        if ray.is_initialized():
            return ray
        address = self.config.address or os.environ.get("RAY_ADDRESS") or None
        if address:
            log.info("connecting to the Ray cluster at %s", address)
            ray.init(address=address, log_to_driver=False)
        else:
            log.info("starting a local Ray instance")
            ray.init(include_dashboard=False, log_to_driver=False)
            self._started = True
        return ray


def _ray_error(exc: BaseException) -> str:
    """The item function's own exception for a task error; Ray's message otherwise."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return describe(cause)
    first = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {first[0]}" if first else type(exc).__name__
