"""A job's solve in a child process that the job runner can stop (issue 50, Build 3).

Why a process: a HiGHS solve called through the model layer cannot be stopped from
another thread of the server (the call holds its core until it returns), and the memory
it took stays with the server's process. A child process started with ``spawn`` (no
copy of the server's threads, locks or database connections) runs the solve; the runner
thread waits for its answer and, every :data:`POLL_S`, asks whether the job was cancelled
or is past its time limit. If so it terminates the child (SIGTERM, then SIGKILL after
:data:`KILL_AFTER_S`): the solver stops at once and the operating system takes back
every byte it held. The answer comes back as plain data (a dict) through a pipe.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection

#: seconds between the runner's looks at the job (cancelled? past its limit?)
POLL_S = 0.5
#: seconds a terminated child is given to end before it is killed
KILL_AFTER_S = 2.0


class JobStopped(Exception):
    """The child was stopped before it answered: ``reason`` is what stopped it (the
    words :func:`run_in_child`'s ``should_stop`` returned)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _child(fn: Callable[[object, dict], dict], task: dict, conn: Connection) -> None:
    """The child's body: ``fn(None, task)``, its answer sent back (an error as its words)."""
    try:
        answer = fn(None, task)
    except Exception as exc:  # noqa: BLE001 - the parent records it as the job's failure
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    conn.send(answer)
    conn.close()


def stop_child(process: multiprocessing.process.BaseProcess) -> None:
    """End ``process``: SIGTERM, then SIGKILL if it is still alive after
    :data:`KILL_AFTER_S` seconds; reaped either way (no zombie left)."""
    if process.is_alive():
        process.terminate()
        process.join(KILL_AFTER_S)
    if process.is_alive():
        process.kill()
    process.join(KILL_AFTER_S)


def run_in_child(
    fn: Callable[[object, dict], dict],
    task: dict,
    *,
    should_stop: Callable[[], str | None],
    on_start: Callable[[int], None] | None = None,
) -> dict:
    """Run ``fn(None, task)`` in a spawned child process and return its answer.

    Parameters
    ----------
    fn
        A module-level function (the child imports it) taking ``(shared, task)`` as the
        Dask runner's tasks do, returning plain data.
    task
        Plain data (picklable) for ``fn``.
    should_stop
        Asked every :data:`POLL_S` seconds while the child runs: None to go on, or the
        reason to stop it (the job was cancelled, its time limit passed).
    on_start
        Called with the child's process id once it runs.

    Returns
    -------
    dict
        ``fn``'s answer; ``{"error": ...}`` if the child ended without one (killed by
        the operating system, e.g. out of memory).

    Raises
    ------
    JobStopped
        ``should_stop`` gave a reason: the child was terminated and reaped first.
    """
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(fn, task, send), name="procure-job")
    process.start()
    send.close()  # the child holds the sending end: EOF once it ends
    if on_start is not None and process.pid is not None:
        on_start(process.pid)
    try:
        while True:
            if receive.poll(POLL_S):
                try:
                    answer: dict = receive.recv()
                except EOFError:  # the child ended without an answer
                    process.join(KILL_AFTER_S)
                    return {"error": f"the solve process ended (exit code {process.exitcode})"}
                process.join(KILL_AFTER_S)
                return answer
            reason = should_stop()
            if reason is not None:
                raise JobStopped(reason)
            if not process.is_alive() and not receive.poll(0):
                return {"error": f"the solve process ended (exit code {process.exitcode})"}
    finally:
        stop_child(process)
        receive.close()
