"""One parallel runner for every analysis: ``fn(shared, task)`` over tasks, serially, in
local processes, or on a Dask cluster (sensitivity sweeps, break-even prices, the
stochastic scenarios and cuts all run through :func:`run_tasks`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

_SHARED: object = None  # what every task of a local process pool reads (see run_tasks)


def _set_shared(shared: object) -> None:
    global _SHARED
    _SHARED = shared


def _with_shared(args: tuple):
    fn, task = args
    return fn(_SHARED, task)


def _apply(fn: Callable, shared: object, task: object):
    return fn(shared, task)


def run_tasks(
    fn: Callable,
    tasks: list,
    *,
    shared: object = None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> list:
    """Run ``fn(shared, task)`` over ``tasks``: serially, in local processes, or on Dask.

    ``shared`` (the compiled problem, say) is sent to each process or Dask worker once;
    each task carries only what differs.

    Parameters
    ----------
    workers
        Local processes (1: in this process).
    scheduler
        A ``dask.distributed`` scheduler address (``tcp://host:8786``) or a Client;
        when given, tasks run on that cluster.
    progress
        Called with (done, total) after each task finishes.
    deadline
        A ``time.perf_counter()`` time after which no further task starts (in this
        process; a pool or cluster runs what it was given): those results are None.

    Returns
    -------
    list
        The results in the order of ``tasks``, whatever the order they finished in.
    """
    total = len(tasks)
    out: list = [None] * total
    if scheduler is not None:
        from dask.distributed import Client, as_completed

        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            on_workers = client.scatter(shared, broadcast=True)
            futures = [client.submit(_apply, fn, on_workers, t, pure=False) for t in tasks]
            index = {f.key: i for i, f in enumerate(futures)}
            for done, future in enumerate(as_completed(futures), start=1):
                out[index[future.key]] = future.result()
                if progress:
                    progress(done, total)
        finally:
            if not isinstance(scheduler, Client):
                client.close()
        return out
    if workers <= 1 or total <= 1:
        for i, task in enumerate(tasks):
            if deadline is not None and time.perf_counter() > deadline:
                break
            out[i] = fn(shared, task)
            if progress:
                progress(i + 1, total)
        return out
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_set_shared, initargs=(shared,)
    ) as pool:
        for i, result in enumerate(pool.map(_with_shared, [(fn, t) for t in tasks])):
            out[i] = result
            if progress:
                progress(i + 1, total)
    return out
