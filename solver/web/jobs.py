"""Solves and analyses as background jobs on the Dask runner
(:func:`solver.analyses.runner.run_tasks`).

A job is a row of ``jobs`` (status, stage, progress): the page polls it, so a job
outlives a page reload. Each job runs in a thread of this server that hands its task to
the Dask cluster (a local one, in this process, started at the first job; or the
scheduler given with ``procure serve --scheduler tcp://host:8786``) and stores the
verified plan it returns under its inputs digest.

- A sensitivity job (:meth:`JobRunner.submit_sensitivity`) solves the plan's problem for
  analysis exactly as ``procure sensitivity`` does, then its break-even prices, one
  progress step per pool class; its result is stored in ``analyses``
  (:mod:`solver.web.analysis_jobs`).
- A watch job (:meth:`JobRunner.submit_watch`, :mod:`solver.web.price_watch`) compares a
  stored plan with the latest price snapshot, as ``procure watch`` does.
- Cancel means stop (issue 50): the job is marked ``cancelled`` at once and whatever it
  returns is dropped. A solve job on this server's own cluster (no ``--scheduler``) runs
  in a child process (:mod:`solver.web.job_process`) that the job's thread terminates
  within :data:`~solver.web.job_process.POLL_S` of the cancel: the solver stops and its
  memory goes back to the operating system. Analysis jobs (sensitivity, frontier,
  two-stage, alternatives, preferences) run in such a child too, their re-solves in its
  local processes (ended with it). On a remote scheduler (``--scheduler``) an analysis
  job stops at its next progress step, and the cluster drops its tasks not yet started;
  a solve there finishes, unseen.
- Progress: a job's child sends its steps and its MIPs' incumbent, bound and gap (HiGHS
  callbacks, :mod:`solver.core.backends.progress`) as it runs; the job's ``stage`` shows
  them with an estimate of the time left and what is left of its time limit
  (:class:`~solver.web.job_process.JobProgress`), on the jobs page and in the API.
- Time limits: every job has one, :data:`DEFAULT_TIME_LIMIT_S` unless the form or the API
  gives ``time_limit_s`` (kept in the job's ``options``). A job past it stops as a cancel
  does and is marked ``timed_out`` with the limit in its message.
- Queue per user: at most :data:`MAX_JOBS_PER_USER` jobs of one user (``created_by``) run
  at once, and :data:`MAX_RUNNING_JOBS` in all; the others wait, ``queued``.
- A carbon-frontier job and a two-stage job (:mod:`solver.web.analysis_jobs`) run
  ``procure report``'s frontier and ``procure solve``'s two-stage plan the same way, their
  solves on the same cluster, their results stored in ``analyses``.
- Owners: each server has an instance id, random, made at its start
  (``JobRunner.instance_id``: a row of ``servers`` with a heartbeat every
  :data:`HEARTBEAT_S`), and a name that a restart keeps (host and port, or ``procure
  serve --instance``); a job's ``owner`` is the id of the server that queued it.
- Server restart: :meth:`JobRunner.start` (called when the app starts) marks
  ``interrupted`` (never ``done``) the jobs still ``queued`` or ``running`` that no live
  server runs: those of this server's earlier runs (the same name), of servers silent for
  :data:`LEASE_S` (each heartbeat marks those too), and of none. The jobs of another live
  server on the same database are left to it. An interrupted job can be re-run
  (:meth:`JobRunner.rerun`), which queues a new job for the same variant or analysis.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from sqlalchemy import delete, select, update

from solver.analyses.runner import run_tasks
from solver.errors import ProcureError
from solver.plan import Plan
from solver.web.job_process import JobProgress, JobStopped, run_in_child
from solver.web.store import Analysis, Job, PlanRecord, Server, Store, Variant
from solver.web.store.models import JOB_OPEN, JobStatus, utc_now
from solver.web.workspace import (
    solve_task,
    store_plan,
    stored_plan,
    task_of,
    variant_inputs,
)

#: jobs running at once in this server (the rest wait, queued)
MAX_RUNNING_JOBS = 4
#: jobs of one user running at once (issue 50): half of :data:`MAX_RUNNING_JOBS`, so one
#: person's hard solves leave the other half to everyone else
MAX_JOBS_PER_USER = 2
#: a job's time limit unless it gives one, seconds (issue 50). 15 minutes: above the
#: slowest workspace job issue 50 measured (500 s, "what moves it" on the carbon-capped
#: seed under load), so no job that finishes today is stopped, and a stuck job's turn
#: comes free within 15 minutes
DEFAULT_TIME_LIMIT_S = 900.0
#: the threads that run or wait for jobs (a queued job's thread waits for its turn)
JOB_THREADS = 32
#: seconds between a server's heartbeats (``servers.seen_at``)
HEARTBEAT_S = 10.0
#: a server not seen for this long is gone: its open jobs are marked interrupted
LEASE_S = 60.0
#: the analyses run as jobs besides solves (:mod:`solver.web.analysis_jobs`)
ANALYSIS_KINDS = ("sensitivity", "frontier", "two_stage", "alternatives", "preferences")


class JobCancelled(Exception):
    """Raised from a job's progress callback once the job is cancelled (or timed out): the
    runner stops waiting, and the cluster drops the tasks not yet started (their futures
    released)."""


def time_limit_of(options: dict) -> float:
    """A job's time limit in seconds: its ``time_limit_s`` option, else
    :data:`DEFAULT_TIME_LIMIT_S`."""
    return float(options.get("time_limit_s") or DEFAULT_TIME_LIMIT_S)


def checked_time_limit(value: object, where: str = "time_limit_s") -> float | None:
    """A time limit asked for (a form field or an API value) as seconds; None when not
    given (the default applies).

    Raises
    ------
    ProcureError
        Not a number of seconds above 0.
    """
    if value is None or str(value).strip() == "":
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ProcureError(
            f"{where}: {value!r} is not a time limit",
            fix=f"give the job's time limit in seconds, above 0 (default {DEFAULT_TIME_LIMIT_S:g})",
        )
    return seconds


class JobRunner:
    """Queue, run, cancel and re-run solve jobs.

    Parameters
    ----------
    store
        The workspace database.
    scheduler
        A Dask scheduler address; None starts a local cluster (one worker in this process,
        a thread per solve) at the first job.
    catalog_dir
        The catalog folder (None: the shipped catalog).
    name
        This server's name, the same after a restart (None: the host's name); two servers
        on one database need two names (``procure serve`` gives host:port).
    """

    def __init__(
        self,
        store: Store,
        scheduler: str | None = None,
        catalog_dir: str | None = None,
        name: str | None = None,
    ):
        self.store = store
        self.scheduler = scheduler
        self.catalog_dir = catalog_dir
        self.name = name or socket.gethostname()
        #: random, made at each start: the owner of the jobs this server queues
        self.instance_id = uuid.uuid4().hex
        self._stop = threading.Event()
        self._heart: threading.Thread | None = None
        self._pool = ThreadPoolExecutor(max_workers=JOB_THREADS, thread_name_prefix="job")
        #: the running jobs' users (job id -> created_by), guarded by ``_turns``
        self._running: dict[int, str] = {}
        self._turns = threading.Condition()
        #: running jobs' deadlines, :func:`time.monotonic` seconds
        self._deadlines: dict[int, float] = {}
        #: the child process of each running solve job (job id -> pid)
        self.children: dict[int, int] = {}
        self._lock = threading.Lock()
        #: inputs digest -> the open solve job of this server for it (one solve per digest)
        self._solving: dict[str, int] = {}
        self._solving_lock = threading.Lock()
        self._client = None
        self._cluster = None

    # ------------------------------------------------------------------ cluster

    def client(self):
        """The Dask client (the local cluster is started here, once)."""
        with self._lock:
            if self._client is None:
                from dask.distributed import Client, LocalCluster

                if self.scheduler:
                    self._client = Client(self.scheduler)
                else:
                    self._cluster = LocalCluster(
                        n_workers=1,
                        threads_per_worker=2,
                        processes=False,
                        dashboard_address=None,
                    )
                    self._client = Client(self._cluster)
            return self._client

    def close(self) -> None:
        """Stop (the server shuts down, e.g. on SIGTERM): this server's open jobs are
        marked ``interrupted`` first, so that what the stopped cluster makes them raise is
        not recorded as a failure (:meth:`_run` stores nothing once they are)."""
        self._stop.set()
        try:
            self.interrupt_own_jobs()
        except Exception:  # noqa: BLE001 - a database already gone: the next start marks them
            pass
        self._pool.shutdown(wait=False, cancel_futures=True)
        try:  # gone: another server marks what this one leaves open at its next heartbeat
            with self.store.sessions() as session:
                session.execute(delete(Server).where(Server.id == self.instance_id))
                session.commit()
        except Exception:  # noqa: BLE001 - a database already gone: nothing to remove
            pass
        with self._lock:
            if self._client is not None:
                self._client.close()
            if self._cluster is not None:
                self._cluster.close()
            self._client = self._cluster = None

    # ------------------------------------------------------------------ jobs

    def start(self) -> int:
        """Register this server (its instance id, name and heartbeat), mark the open jobs
        no live server runs ``interrupted`` (:meth:`interrupt_open_jobs`) and start the
        heartbeat; return how many jobs were marked."""
        now = utc_now()
        with self.store.sessions() as session:
            session.add(Server(id=self.instance_id, name=self.name, started_at=now, seen_at=now))
            session.commit()
        marked = self.interrupt_open_jobs(earlier_runs=True)
        self._heart = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._heart.start()
        return marked

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                with self.store.sessions() as session:
                    now = utc_now()
                    seen = session.execute(
                        update(Server).where(Server.id == self.instance_id).values(seen_at=now)
                    )
                    if not seen.rowcount and not self._stop.is_set():  # removed by another
                        session.add(
                            Server(id=self.instance_id, name=self.name, started_at=now, seen_at=now)
                        )
                    session.commit()
                self.interrupt_open_jobs()
            except Exception:  # noqa: BLE001 - the database away for a moment: next beat
                continue

    def interrupt_open_jobs(self, *, earlier_runs: bool = False) -> int:
        """Mark the jobs left ``queued`` or ``running`` that no live server runs
        ``interrupted``; return how many.

        Live: a server seen within :data:`LEASE_S`; with ``earlier_runs``, a server of
        this one's name is not live (it is this server before its restart). This server's
        own jobs are never marked here.
        """
        now = utc_now()
        live = select(Server.id).where(Server.seen_at >= now - timedelta(seconds=LEASE_S))
        if earlier_runs:
            live = live.where((Server.name != self.name) | (Server.id == self.instance_id))
        with self.store.sessions() as session:
            done = session.execute(
                update(Job)
                .where(
                    Job.status.in_(JOB_OPEN),
                    Job.owner != self.instance_id,
                    Job.owner.not_in(live),
                )
                .values(
                    status="interrupted",
                    stage="interrupted: the server stopped before the job finished",
                    finished_at=now,
                )
            )
            silent = Server.seen_at < now - timedelta(seconds=LEASE_S)
            if earlier_runs:
                silent = silent | (Server.name == self.name)
            gone = delete(Server).where(Server.id != self.instance_id, silent)
            session.execute(gone.execution_options(synchronize_session=False))
            session.commit()
            return int(done.rowcount or 0)

    def interrupt_own_jobs(self) -> int:
        """Mark this server's open jobs ``interrupted`` (it is stopping); return how many."""
        with self.store.sessions() as session:
            done = session.execute(
                update(Job)
                .where(Job.status.in_(JOB_OPEN), Job.owner == self.instance_id)
                .values(
                    status="interrupted",
                    stage="interrupted: the server stopped before the job finished",
                    finished_at=utc_now(),
                )
            )
            session.commit()
            return int(done.rowcount or 0)

    def submit(
        self,
        variant_id: int,
        *,
        rerun_of: int | None = None,
        time_limit_s: float | None = None,
        who: str = "",
    ) -> Job:
        """Queue a solve of a variant (its inputs are checked first: a bad variant is
        refused with its message and no job). The same inputs stored: a job done at once
        with that plan; the same inputs being solved by this server: that open job (one
        solve, however many ask at once). ``time_limit_s``: the job's limit (None:
        :data:`DEFAULT_TIME_LIMIT_S`); ``who``: the user it counts against."""
        with self.store.sessions() as session:
            variant = session.get(Variant, variant_id)
            if variant is None:
                raise ProcureError(f"no variant {variant_id}", fix="pick one on its problem page")
            inputs = variant_inputs(variant, self.catalog_dir)
        with self._solving_lock, self.store.sessions() as session:
            running = self._solving.get(inputs.digest)
            if running is not None:
                open_job = session.get(Job, running)
                if open_job is not None and open_job.status in JOB_OPEN:
                    return open_job
            job = Job(
                variant_id=variant_id,
                rerun_of=rerun_of,
                owner=self.instance_id,
                created_by=who,
                options_json=json.dumps({"time_limit_s": time_limit_s or DEFAULT_TIME_LIMIT_S}),
            )
            found = stored_plan(session, inputs.digest)
            if found is not None:  # the same inputs: the stored plan, at once
                job.status, job.progress, job.plan_id = "done", 1.0, found.id
                job.stage = "the same inputs were solved before: stored plan"
                job.started_at = job.finished_at = utc_now()
            session.add(job)
            session.commit()
            if job.status == "queued":
                self._solving[inputs.digest] = job.id
        if job.status == "queued":
            self._pool.submit(self._run, job.id)
        return job

    def _solved(self, job_id: int) -> None:
        """Forget a finished solve job (the next submit of its inputs finds its plan)."""
        with self._solving_lock:
            for digest in [d for d, j in self._solving.items() if j == job_id]:
                del self._solving[digest]

    def submit_sensitivity(
        self,
        plan_id: int,
        break_even_limit: int | None,
        *,
        rerun_of: int | None = None,
        time_limit_s: float | None = None,
    ) -> Job:
        """Queue the sensitivity of a stored plan: shadow prices, and break-even prices
        for the plan's pools and ``break_even_limit`` others (None: all; -1: none). An
        analysis stored already with the same limit is the answer at once.
        ``time_limit_s``: the job's limit (None: :data:`DEFAULT_TIME_LIMIT_S`), kept in its
        options; the break-even search leaves out the pools not reached by
        :data:`~solver.web.analysis_jobs.BREAK_EVEN_SHARE` of it (named in the result)."""
        with self.store.sessions() as session:
            record = session.get(PlanRecord, plan_id)
            if record is None or record.variant_id is None:
                raise ProcureError(f"no stored plan {plan_id}", fix="pick one on the home page")
            job = Job(
                kind="sensitivity",
                variant_id=record.variant_id,
                plan_id=plan_id,
                break_even_limit=break_even_limit,
                rerun_of=rerun_of,
                owner=self.instance_id,
                options_json=json.dumps({"time_limit_s": time_limit_s or DEFAULT_TIME_LIMIT_S}),
            )
            mine = select(Analysis).where(
                Analysis.plan_id == plan_id, Analysis.kind == "sensitivity"
            )
            found = session.scalars(
                mine.where(Analysis.break_even_limit == break_even_limit)
                if break_even_limit is not None
                else mine.where(Analysis.break_even_limit.is_(None))
            ).first()
            self._add(session, job, stored_before=found is not None)
        return self.enqueue(job)

    @staticmethod
    def _add(session, job: Job, *, stored_before: bool) -> None:
        """Store a new analysis job: done at once when the same analysis is stored."""
        if stored_before:
            job.status, job.progress, job.stage = "done", 1.0, "analysed before: stored"
            job.started_at = job.finished_at = utc_now()
        session.add(job)
        session.commit()

    def enqueue(self, job: Job) -> Job:
        """Run a job on this server's pool if it is queued (stored, status ``queued``: a job
        found done at once is not run); return the job. A job kind's own module builds and
        stores its job, then hands it here (:mod:`solver.web.price_watch`)."""
        if job.status == "queued":
            self._pool.submit(self._run, job.id)
        return job

    def submit_analysis(
        self, plan_id: int, kind: str, options: dict, *, rerun_of: int | None = None
    ) -> Job:
        """Queue a carbon frontier (``kind`` "frontier", ``options`` {"points": N}) or a
        two-stage plan ("two_stage", {"method": ...}) of a stored plan's problem
        (:mod:`solver.web.analysis_jobs`: the options are checked first, a bad one is
        refused with its message and no job). One stored already with the same options is
        the answer at once."""
        from solver.web.analysis_jobs import check_analysis

        options_json = json.dumps(options, sort_keys=True)
        with self.store.sessions() as session:
            record = session.get(PlanRecord, plan_id)
            if record is None or record.variant_id is None:
                raise ProcureError(f"no stored plan {plan_id}", fix="pick one on the home page")
            check_analysis(record, kind, options)
            job = Job(
                kind=kind,
                variant_id=record.variant_id,
                plan_id=plan_id,
                options_json=options_json,
                rerun_of=rerun_of,
                owner=self.instance_id,
            )
            found = session.scalars(
                select(Analysis.id).where(
                    Analysis.plan_id == plan_id,
                    Analysis.kind == kind,
                    Analysis.options_json == options_json,
                )
            ).first()
            self._add(session, job, stored_before=found is not None)
        return self.enqueue(job)

    def submit_watch(self, plan_id: int, *, rerun_of: int | None = None) -> Job:
        """Queue a price watch of a stored plan (:mod:`solver.web.price_watch`)."""
        from solver.web.price_watch import submit_watch

        return submit_watch(self, plan_id, rerun_of=rerun_of)

    def rerun(self, job_id: int) -> Job:
        with self.store.sessions() as session:
            old = session.get(Job, job_id)
            if old is None:
                raise ProcureError(f"no job {job_id}", fix="see the jobs page")
            kind, variant_id, plan_id = old.kind, old.variant_id, old.plan_id
            limit, options = old.break_even_limit, json.loads(old.options_json or "{}")
            who = old.created_by
        if kind == "sensitivity":
            return self.submit_sensitivity(
                plan_id, limit, rerun_of=job_id, time_limit_s=options.get("time_limit_s")
            )
        if kind == "watch":
            return self.submit_watch(plan_id, rerun_of=job_id)
        if kind in ANALYSIS_KINDS:
            return self.submit_analysis(plan_id, kind, options, rerun_of=job_id)
        if kind == "prices_pull":
            from solver.web.price_upload import submit_upload

            return submit_upload(self, variant_id, options, who, rerun_of=job_id)
        return self.submit(variant_id, rerun_of=job_id, time_limit_s=options.get("time_limit_s"))

    def cancel(self, job_id: int) -> bool:
        """Cancel a queued or running job; False when it had already finished."""
        with self.store.sessions() as session:
            done = session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status.in_(JOB_OPEN))
                .values(status="cancelled", stage="cancelled", finished_at=utc_now())
            )
            session.commit()
            return bool(done.rowcount)

    def update_job(self, job_id: int, **values: object) -> bool:
        """Update a job's columns (status, stage, progress, times, ...) while it is still
        open; False when it was cancelled or finished meanwhile (the caller then stops)."""
        with self.store.sessions() as session:
            done = session.execute(
                update(Job).where(Job.id == job_id, Job.status.in_(JOB_OPEN)).values(**values)
            )
            session.commit()
            return bool(done.rowcount)

    def step_job(self, job_id: int, **values: object) -> None:
        """A progress step (:meth:`update_job`), raising :class:`JobCancelled` when the
        job was cancelled meanwhile or is past its time limit (then marked ``timed_out``):
        a long job's progress callback stops it so."""
        if self.past_limit(job_id):
            self.time_out(job_id)
            raise JobCancelled(job_id)
        if not self.update_job(job_id, **values):
            raise JobCancelled(job_id)

    def deadline_of(self, job_id: int) -> float | None:
        """A running job's deadline, :func:`time.monotonic` seconds (None: not running)."""
        return self._deadlines.get(job_id)

    def past_limit(self, job_id: int) -> bool:
        """Whether a running job is past its time limit."""
        deadline = self._deadlines.get(job_id)
        return deadline is not None and time.monotonic() > deadline

    def time_out(self, job_id: int) -> bool:
        """Mark an open job ``timed_out`` with its limit in the message; False when it
        had already ended."""
        with self.store.sessions() as session:
            options = session.scalars(select(Job.options_json).where(Job.id == job_id)).first()
        limit = time_limit_of(json.loads(options or "{}"))
        return self.update_job(
            job_id,
            status=JobStatus.TIMED_OUT.value,
            stage="timed out",
            error=(
                f"stopped at its time limit of {limit:g} s; re-run it with a longer limit "
                "(time_limit_s on the solve form or in the API) or simplify the variant"
            ),
            finished_at=utc_now(),
        )

    def _stop_reason(self, job_id: int) -> str | None:
        """Why a running job's child should stop: cancelled (or ended otherwise), timed
        out (marked here), or None to go on."""
        if self.past_limit(job_id):
            self.time_out(job_id)
            return "timed out"
        with self.store.sessions() as session:
            status = session.scalars(select(Job.status).where(Job.id == job_id)).first()
        return None if status in JOB_OPEN else str(status)

    def _wait_turn(self, job_id: int) -> bool:
        """Wait until the job may run: fewer than :data:`MAX_JOBS_PER_USER` jobs of its
        user and :data:`MAX_RUNNING_JOBS` in all running. False when it ended meanwhile
        (cancelled while queued) or the server stops."""
        while not self._stop.is_set():
            with self.store.sessions() as session:
                row = session.execute(
                    select(Job.status, Job.created_by, Job.options_json).where(Job.id == job_id)
                ).first()
            if row is None or row.status != JobStatus.QUEUED.value:
                return False
            with self._turns:
                mine = sum(1 for u in self._running.values() if u == row.created_by)
                if len(self._running) < MAX_RUNNING_JOBS and mine < MAX_JOBS_PER_USER:
                    self._running[job_id] = row.created_by
                    limit = time_limit_of(json.loads(row.options_json or "{}"))
                    self._deadlines[job_id] = time.monotonic() + limit
                    return True
                self._turns.wait(0.5)
        return False

    def _end_turn(self, job_id: int) -> None:
        with self._turns:
            self._running.pop(job_id, None)
            self._deadlines.pop(job_id, None)
            self._turns.notify_all()

    def _run(self, job_id: int) -> None:
        try:
            if not self._wait_turn(job_id):
                return
        except Exception as exc:  # noqa: BLE001 - the database away: the job fails with it
            self._fail(job_id, exc)
            self._solved(job_id)
            return
        try:
            with self.store.sessions() as session:
                kind = session.scalars(select(Job.kind).where(Job.id == job_id)).first()
            if kind == "watch":
                from solver.web.price_watch import run_watch_job

                run_watch_job(self, job_id)
            elif kind == "prices_pull":
                from solver.web.price_upload import run_upload

                run_upload(self, job_id)
            elif kind in ANALYSIS_KINDS:
                from solver.web.analysis_jobs import run_analysis

                run_analysis(self, job_id, kind)
            else:
                self._solve(job_id)
        except (JobCancelled, JobStopped):
            pass  # marked cancelled or timed out; nothing of it is stored
        except Exception as exc:  # noqa: BLE001 - a job fails with its message, never silently
            if self.past_limit(job_id) and self.time_out(job_id):
                return  # stopped at its limit (what the stop made it raise is not a failure)
            self._fail(job_id, exc)
        finally:
            self._end_turn(job_id)
            self._solved(job_id)

    def _fail(self, job_id: int, exc: Exception) -> None:
        """Record why a job stopped: ``interrupted`` while the server stops (the cluster
        closed under it), else ``failed`` with the error's message (a database error as
        :func:`solver.web.faults.describe_fault` words it, never its SQL or URL)."""
        from solver.web.faults import DATABASE_ERRORS, describe_fault

        if self._stop.is_set():
            stage = "interrupted: the server stopped before the job finished"
            self.update_job(job_id, status="interrupted", stage=stage, finished_at=utc_now())
            return
        error = describe_fault(exc).text() if isinstance(exc, DATABASE_ERRORS) else str(exc)
        try:
            self.update_job(
                job_id, status="failed", stage="failed", error=error, finished_at=utc_now()
            )
        except DATABASE_ERRORS:  # nothing can be recorded; the next start marks it
            pass

    def _solve(self, job_id: int) -> None:
        with self.store.sessions() as session:
            job = session.get(Job, job_id)
            if job is None or job.status != "queued":
                return
            inputs = variant_inputs(job.variant, self.catalog_dir)
            variant_id = job.variant_id
        local = not self.scheduler
        if not self.update_job(
            job_id,
            status="running",
            stage="solving in a child process" if local else "solving on the Dask cluster",
            progress=0.1,
            started_at=utc_now(),
        ):
            return
        if local:  # a child process, stopped on cancel or at the time limit
            watch = JobProgress(self.deadline_of(job_id), "solving in a child process")
            last = [0.0]

            def on_progress(message: dict) -> None:  # the MIP's incumbent, bound, gap
                line, _ = watch.update(message)
                if time.monotonic() - last[0] >= 1.0:
                    last[0] = time.monotonic()
                    self.update_job(job_id, stage=line)

            try:
                result = run_in_child(
                    solve_task,
                    task_of(inputs),
                    should_stop=lambda: self._stop_reason(job_id),
                    on_start=lambda pid: self.children.__setitem__(job_id, pid),
                    on_progress=on_progress,
                )
            finally:
                self.children.pop(job_id, None)
        else:
            [result] = run_tasks(
                solve_task,
                [task_of(inputs)],
                scheduler=self.client(),
                progress=lambda done, total: self.step_job(
                    job_id, progress=0.1 + 0.8 * done / total
                ),
            )
        if "error" in result:
            self.update_job(
                job_id,
                status="failed",
                stage="failed",
                error=result["error"],
                finished_at=utc_now(),
            )
            return
        plan = Plan.model_validate_json(result["plan_json"])
        with self.store.sessions() as session:
            if session.scalars(select(Job.status).where(Job.id == job_id)).first() != "running":
                return  # cancelled while it ran: its plan is dropped
            record = store_plan(session, variant_id, inputs, plan)
            plan_id = record.id
        self.update_job(
            job_id,
            status="done",
            stage="stored",
            progress=1.0,
            plan_id=plan_id,
            finished_at=utc_now(),
        )
