"""One parallel runner for every analysis: ``fn(shared, task)`` over tasks, serially, in
local processes, or on a Dask cluster (sensitivity sweeps, break-even prices, the
stochastic scenarios and cuts all run through :func:`run_tasks`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

_SHARED: object = None  # what every task of a local process pool reads (see run_tasks)


def _set_shared(shared: object, parent_pid: int | None = None) -> None:
    """A pool worker's start: the shared data, and a worker that cannot outlive or disturb
    its parent (:func:`_quiet_worker`)."""
    global _SHARED
    _SHARED = shared
    if parent_pid is not None:
        _quiet_worker(parent_pid)


def _quiet_worker(parent_pid: int) -> None:
    """Make a forked pool worker safe to leave to its parent.

    - SIGINT ignored: Ctrl-C reaches the whole process group, and a worker would print its
      own KeyboardInterrupt traceback; the parent stops the workers instead.
    - SIGTERM and SIGHUP back to their default (die quietly): a fork inherits the CLI's
      handlers, which raise in the worker and print a traceback.
    - Linux: the kernel sends SIGTERM when the parent dies, even by SIGKILL
      (``prctl(PR_SET_PDEATHSIG)``); a parent already gone ends the worker now.
    - stdin, stdout and stderr on /dev/null: a worker holding the parent's pipes keeps a
      caller reading them waiting after the parent has exited; results come back through
      the pool, not the terminal.
    """
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: the parent stops its workers itself
        pass
    if os.getppid() != parent_pid:
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


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

        client = scheduler if isinstance(scheduler, Client) else dask_client(scheduler)
        try:
            # hash=False: a key of its own each call; with the content's hash, a second call
            # on the same shared data (the stochastic scenarios, then their comparisons)
            # reuses the key the first call's futures are releasing, and its tasks are
            # cancelled for "lost dependencies" (seen in the workspace's two-stage job)
            on_workers = client.scatter(shared, broadcast=True, hash=False)
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
    import os

    pool = ProcessPoolExecutor(
        max_workers=workers, initializer=_set_shared, initargs=(shared, os.getpid())
    )
    try:
        _collect(pool, fn, tasks, out, progress, deadline)
    except BaseException:  # Ctrl-C, SIGTERM, SIGHUP or an error: no worker outlives this
        _stop(pool)
        raise
    pool.shutdown(wait=True)
    return out


def _collect(pool, fn: Callable, tasks: list, out: list, progress, deadline) -> None:
    """Run ``tasks`` on ``pool`` into ``out`` (in their order). Past ``deadline`` the tasks
    not started yet are cancelled (their results stay None) and those running are
    awaited: a pool honours the deadline as the serial loop does."""
    from concurrent.futures import FIRST_COMPLETED, wait

    futures = [pool.submit(_with_shared, (fn, t)) for t in tasks]
    index = {f: i for i, f in enumerate(futures)}
    pending, done = set(futures), 0
    while pending:
        timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
        finished, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
        if deadline is not None and time.perf_counter() > deadline:
            for f in pending:
                f.cancel()  # False for one already running: it is awaited below
            finished, pending = finished | wait(pending)[0], set()
        for f in finished:
            if f.cancelled():
                continue
            out[index[f]] = f.result()
            done += 1
            if progress:
                progress(done, len(tasks))


#: a Dask message's first 8 bytes are its length; a handshake is tens of bytes, and no
#: scheduler's first message is near this (a larger one is another protocol's bytes)
_MAX_HANDSHAKE_BYTES = 1 << 20


def dask_client(address: str, *, timeout_s: float = 10.0):
    """A Dask client of the scheduler at ``address``, or a clear refusal.

    Before Dask reads anything, the peer is probed (``tcp://`` addresses): a Dask
    scheduler sends its handshake as soon as a connection is accepted, a message that
    starts with its length (8 bytes, little-endian). A peer that accepts and sends nothing
    within ``timeout_s`` (a stuck process, a port forwarded nowhere) would make the client
    wait without end; a peer that is not Dask (a web server, say) sends bytes that read as
    a length of exabytes, which the client would try to allocate. Both are refused here,
    as is a scheduler that does not finish connecting within ``timeout_s``.

    Raises
    ------
    ProcureError
        Nothing listens there, the peer says nothing, is not Dask, or does not connect.
    """
    import socket
    import struct

    from dask.distributed import Client

    from solver.errors import ProcureError

    fix = (
        "start a scheduler (dask scheduler) and pass its tcp://host:port, or leave --scheduler out"
    )
    scheme, _, rest = address.rpartition("://")
    if scheme in ("", "tcp"):
        host, _, port = rest.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as s:
                s.settimeout(timeout_s)
                head = b""
                while len(head) < 8:
                    chunk = s.recv(8 - len(head))
                    if not chunk:
                        break
                    head += chunk
        except ValueError:
            raise ProcureError(
                f"{address!r} is not a scheduler address", field="--scheduler", fix=fix
            ) from None
        except TimeoutError:
            raise ProcureError(
                f"the scheduler at {address} accepted the connection but sent nothing in "
                f"{timeout_s:g} s: it is not a Dask scheduler, or it is stuck",
                field="--scheduler",
                fix=fix,
            ) from None
        except OSError as exc:
            raise ProcureError(
                f"cannot reach a scheduler at {address}: {exc.strerror or exc}",
                field="--scheduler",
                fix=fix,
            ) from None
        size = struct.unpack("<Q", head)[0] if len(head) == 8 else None
        if size is None or size > _MAX_HANDSHAKE_BYTES:
            raise ProcureError(
                f"the peer at {address} is not a Dask scheduler (it "
                + ("closed the connection" if size is None else f"began with {head[:8]!r}")
                + ", where Dask begins with its handshake)",
                field="--scheduler",
                fix=fix,
            )
    try:
        return Client(address, timeout=timeout_s)
    except Exception as exc:  # noqa: BLE001 (Dask raises OSError, TimeoutError, ValueError...)
        raise ProcureError(
            f"could not connect to the Dask scheduler at {address} within {timeout_s:g} s "
            f"({type(exc).__name__}: {exc})",
            field="--scheduler",
            fix=fix,
        ) from None


def capped_workers(workers: int) -> tuple[int, str | None]:
    """``workers`` local processes, at most this machine's CPUs (an unbounded
    ``--workers 10000`` forks until the machine refuses); the message says when capped.

    Raises
    ------
    ProcureError
        Fewer than 1.
    """
    import os

    from solver.errors import ProcureError

    if workers < 1:
        raise ProcureError("--workers must be 1 or more", field="--workers", fix="e.g. 2")
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    if workers <= cpus:
        return workers, None
    return cpus, (
        f"--workers {workers} is more than this machine's {cpus} CPUs: using {cpus} "
        "(more processes than CPUs only wait for each other)"
    )


def _stop(pool: ProcessPoolExecutor, grace_s: float = 2.0) -> None:
    """Stop a pool now: queued tasks cancelled, running workers terminated (SIGTERM, then
    SIGKILL after ``grace_s``) and reaped, so that none outlives the parent."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # running workers
    # read before shutdown, which forgets it (sets the pool's attribute to None)
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    stop_by = time.perf_counter() + grace_s
    for process in processes:
        process.join(max(0.0, stop_by - time.perf_counter()))
        if process.is_alive():
            process.kill()
            process.join(1.0)
    # the pool's manager thread closes its wake-up pipe when it sees the workers gone;
    # left running, it races the interpreter's exit hook that writes to that pipe
    # (concurrent.futures.process._python_exit), which then prints a traceback
    if manager is not None and manager.is_alive():
        manager.join(max(1.0, stop_by - time.perf_counter()))
    if manager is not None and manager.is_alive():  # still stopping: the hook skips it
        from concurrent.futures import process as futures_process

        getattr(futures_process, "_threads_wakeups", {}).pop(manager, None)
