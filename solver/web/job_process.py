"""A job's solve in a child process that the job runner can stop (issue 50, Build 3).

Why a process: a HiGHS solve called through the model layer cannot be stopped from
another thread of the server (the call holds its core until it returns), and the memory
it took stays with the server's process. A child process started with ``spawn`` (no
copy of the server's threads, locks or database connections) runs the solve; the runner
thread waits for its answer and, every :data:`POLL_S`, asks whether the job was cancelled
or is past its time limit. If so it terminates the child (SIGTERM, then SIGKILL after
:data:`KILL_AFTER_S`): the solver stops at once and the operating system takes back
every byte it held. The answer comes back as plain data (a dict) through a pipe.

Progress comes back through the same pipe while the child runs (:func:`report`): a
stage's steps (``{"stage", "done", "total", "progress"}``) and a running MIP's incumbent,
bound and gap (``{"mip": {...}}``, from HiGHS's callbacks:
:mod:`solver.core.backends.progress`). :class:`JobProgress` turns them into the job's
stage line, with an estimate of the time left.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
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


#: the key of a progress message (any other message is the answer)
PROGRESS_KEY = "__progress__"
#: seconds between a child's MIP progress messages
MIP_EVERY_S = 1.0

_conn: Connection | None = None  # in a child: the pipe to the parent
_send_lock = threading.Lock()


def report(message: dict) -> None:
    """In a child of :func:`run_in_child`: send ``message`` (plain data) to the parent's
    ``on_progress``; elsewhere nothing."""
    if _conn is None:
        return
    with _send_lock:
        _conn.send({PROGRESS_KEY: message})


def _child(fn: Callable[[object, dict], dict], task: dict, conn: Connection) -> None:
    """The child's body: ``fn(None, task)``, its answer sent back (an error as its words);
    its MIPs' progress (:func:`report`) sent as they run."""
    global _conn
    from solver.core.backends.progress import mip_progress

    _conn = conn
    try:
        with mip_progress(lambda p: report({"mip": p.as_dict()}), every_s=MIP_EVERY_S):
            answer = fn(None, task)
    except Exception as exc:  # noqa: BLE001 - the parent records it as the job's failure
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    with _send_lock:
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
    on_progress: Callable[[dict], None] | None = None,
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
    on_progress
        Called with each progress message the child sends (:func:`report`).

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
                if isinstance(answer, dict) and PROGRESS_KEY in answer:
                    if on_progress is not None:
                        on_progress(answer[PROGRESS_KEY])
                    continue
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


class JobProgress:
    """A job's stage line from its child's progress messages (:func:`report`), with an
    estimate of the time left.

    A step message ``{"stage": str, "progress": fraction, "done": int, "total": int}``
    sets the stage (and, with steps, the time left: the mean step time so far times the
    steps left); a ``{"mip": MipProgress}`` adds the running MIP's incumbent, bound and gap.
    The line always ends with what is left of the job's time limit.

    Parameters
    ----------
    deadline
        The job's deadline, :func:`time.monotonic` seconds (None: no limit).
    stage
        The stage before the first message.
    """

    #: the stage column's width (``jobs.stage``)
    WIDTH = 200

    def __init__(self, deadline: float | None, stage: str = "running") -> None:
        self.deadline = deadline
        self.stage = stage
        self.progress: float | None = None
        self.steps: tuple[int, int] | None = None
        self.mip: str = ""
        self.began: dict[str, float] = {}

    def update(self, message: dict) -> tuple[str, float | None]:
        """Take one message; the job's stage line and progress fraction (None: unchanged)."""
        from solver.core.backends.progress import MipProgress
        from solver.outputs.progress_text import mip_progress_text

        now = time.monotonic()
        if "mip" in message:
            self.mip = "MIP " + mip_progress_text(MipProgress(**message["mip"]))
        if "stage" in message:
            stage = str(message["stage"])
            if stage != self.stage:
                self.mip = ""
            self.stage = stage
            self.progress = message.get("progress", self.progress)
            done, total = message.get("done"), message.get("total")
            self.steps = (int(done), int(total)) if done is not None and total else None
            self.began.setdefault(stage, now)
        return self.text(now), self.progress

    def text(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        parts = [self.stage]
        if self.steps is not None:
            done, total = self.steps
            elapsed = now - self.began.get(self.stage, now)
            if 0 < done < total:
                parts.append(f"about {elapsed / done * (total - done):.0f} s left")
        if self.mip:
            parts.append(self.mip)
        if self.deadline is not None:
            parts.append(f"time limit in {max(0.0, self.deadline - now):.0f} s")
        line = "; ".join(parts)
        return line if len(line) <= self.WIDTH else line[: self.WIDTH - 3] + "..."
