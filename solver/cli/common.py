"""What every command shares: the Typer app and its groups, exit codes, common options,
and ``_run`` (user errors -> one message and exit 2; bugs -> exit 70)."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from solver.errors import ProcureError, TimeLimitReached
from solver.outputs.progress_text import mip_progress_text


class _App(typer.Typer):
    """The ``procure`` app; a run that names a command builds only that command.

    Typer reads every command's signature and type hints each time the app
    starts, for every command. ``procure --help``,
    an unknown command or the completion script still build them all.
    """

    def __call__(self, *args, **kwargs):
        import sys

        from typer.main import get_command_name

        name = sys.argv[1] if len(sys.argv) > 1 else ""
        commands, groups = self.registered_commands, self.registered_groups
        named = [
            c
            for c in commands
            if (c.name or get_command_name(c.callback.__name__ if c.callback else "")) == name
        ]
        named_groups = [g for g in groups if g.name == name]
        if named or named_groups:
            self.registered_commands, self.registered_groups = named, named_groups
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self.registered_commands, self.registered_groups = commands, groups


app = _App(
    add_completion=True,
    no_args_is_help=True,
    help="Optimisation-based procurement of AI accelerators.",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"procure {version('procure')}")
        except PackageNotFoundError:  # run from a source tree without installing
            from solver import __version__

            typer.echo(f"procure {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version"),
    ] = False,
) -> None:
    """Optimisation-based procurement of AI accelerators."""


catalog_app = typer.Typer(no_args_is_help=True, help="Inspect, validate and import catalogs.")


estimate_app = typer.Typer(no_args_is_help=True, help="Back-of-envelope physics with assumptions.")


app.add_typer(catalog_app, name="catalog")


app.add_typer(estimate_app, name="estimate")


EXIT_USER_ERROR = 2


EXIT_INFEASIBLE = 3


EXIT_NO_PLAN = 4


EXIT_BUG = 70  # EX_SOFTWARE (sysexits.h): an internal error, a bug in procure


EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C); SIGTERM 143, SIGHUP 129: 128 + the signal's number


CatalogOpt = Annotated[
    Path | None, typer.Option("--catalog", help="Catalog folder (default: the shipped catalogs/)")
]


DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks")]


#: ``--db`` of the commands whose ``--prices`` may name a stored snapshot
SnapshotDbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Workspace database holding --prices snapshot:ID (default: procure-workspace.db "
        "here, as procure serve)",
    ),
]
#: what ``--prices`` of resolve takes
PRICES_HELP = (
    "Price CSV, catalog folder or offerings.csv, SkyPilot vms.csv, or a stored snapshot: "
    "snapshot:latest or snapshot:ID (procure prices list)"
)


ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace a symbolic link at an output path (the link, never what it points to)",
    ),
]


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr")]


class Stages:
    """Progress on stderr: one line per stage with its time (``procure: break-even prices:
    16 done in 12.3 s``), written also when stderr is not a terminal (logs, CI); on a
    terminal a bar moves while a stage runs. ``quiet`` silences both.

    Stages run one after another, so each one's time runs from the end of the one before
    (or from the start). Call it as ``progress(stage, done, total)`` (the analyses'
    callback) or ``stages.done(stage, what)`` for a stage without steps.
    """

    def __init__(self, quiet: bool = False) -> None:
        import sys
        import time

        self.quiet = quiet
        self.clock = time.perf_counter
        self.since = self.clock()
        self.bar = None
        self.tasks: dict[str, int] = {}
        if not quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
        self._listening: Any = None
        self._mip_task: Any = None  # the bar's MIP line (a rich TaskID)
        self._last_line = -math.inf
        self._stage_began: dict[str, float] = {}

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        if not self.quiet:
            from solver.core.backends.progress import mip_progress

            self._listening = mip_progress(self.mip)
            self._listening.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._listening is not None:
            self._listening.__exit__(*exc)
            self._listening = None
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def _line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, highlight=False)
        else:
            typer.echo(text, err=True)

    def mip(self, progress) -> None:
        """A running MIP's incumbent, bound, gap and time
        (:class:`solver.core.backends.progress.MipProgress`): on a terminal, the bar's line;
        elsewhere a line every :data:`PROGRESS_EVERY_S` once the MIP has run that long."""
        if self.quiet:
            return
        text = f"MIP: {mip_progress_text(progress)}"
        if self.bar is not None:
            if self._mip_task is None:
                self._mip_task = self.bar.add_task(text, total=None)
            self.bar.update(self._mip_task, description=text)
            return
        now = self.clock()
        if progress.elapsed_s >= PROGRESS_EVERY_S and now - self._last_line >= PROGRESS_EVERY_S:
            self._last_line = now
            self._line(f"procure: {text}")

    def done(self, stage: str, what: str = "") -> None:
        """A stage has finished: its line, with the seconds since the last one."""
        now = self.clock()
        if not self.quiet:
            line = f"procure: {stage}{': ' + what if what else ''} in {now - self.since:.1f} s"
            if self.bar is not None:
                self.bar.console.print(line, highlight=False)
            else:
                typer.echo(line, err=True)
        self.since = now

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self.clock()
        began = self._stage_began.setdefault(stage, now)
        left = time_left_estimate(now - began, done, total)
        if self.bar is not None:
            if stage not in self.tasks:
                self.tasks[stage] = self.bar.add_task(stage, total=total)
            about = "" if left is None else f" (about {left:.0f} s left)"
            self.bar.update(self.tasks[stage], completed=done, description=stage + about)
        elif (
            not self.quiet
            and 0 < done < total
            and now - self._last_line >= PROGRESS_EVERY_S
            and left is not None
        ):
            self._last_line = now
            self._line(f"procure: {stage}: {done} of {total}, about {left:.0f} s left")
        if done >= total:
            self.done(stage, f"{total} done")


#: seconds between progress lines on stderr when it is not a terminal (logs, CI): a MIP's
#: incumbent, bound and gap once it has run this long, a stage's steps and time left
PROGRESS_EVERY_S = 5.0


def time_left_estimate(elapsed_s: float, done: int, total: int) -> float | None:
    """Seconds left of a stage of ``total`` steps, ``done`` of them in ``elapsed_s``: the
    mean step time so far times the steps left (None before the first step)."""
    if done <= 0 or total <= 0:
        return None
    return elapsed_s / done * max(0, total - done)


@contextmanager
def terminal_mip_progress():
    """On a terminal, a running MIP's incumbent, bound, gap and time on one line of stderr,
    rewritten in place (a command without stages, ``procure solve``); nothing elsewhere,
    so logs and captured output keep only the command's own lines."""
    import sys

    if not sys.stderr.isatty():
        yield
        return
    from solver.core.backends.progress import mip_progress

    shown = [False]

    def show(progress) -> None:
        sys.stderr.write(f"\rprocure: MIP: {mip_progress_text(progress)}\033[K")
        sys.stderr.flush()
        shown[0] = True

    try:
        with mip_progress(show):
            yield
    finally:
        if shown[0]:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def emit(
    text: str, out: Path | None, force: bool, inputs: list[tuple[str, Path | None]] = ()
) -> None:
    """A command's text: to ``out`` (atomically, saying so) or to stdout; ``out`` may not be
    one of the command's ``inputs`` (what, path)."""
    import sys

    from solver.outputs.files import check_not_inputs, check_output_file, write_atomic

    if out is None:
        sys.stdout.write(text)
        return
    check_output_file(out, force=force)
    check_not_inputs([("--out", out)], list(inputs))
    write_atomic(out, text)
    typer.echo(f"wrote {out}")


@contextmanager
def _signals_interrupt():
    """SIGTERM and SIGHUP handled as Ctrl-C is (:class:`~solver.errors.Interrupted`, a
    KeyboardInterrupt): staged files are removed, pool workers stopped, and the message
    says what was written. Main thread only (signal handlers cannot be set elsewhere)."""
    import signal
    import sys

    from solver.core.backends import interrupt as stop
    from solver.errors import Interrupted
    from solver.outputs.files import swap_handlers

    def interrupt(signum, frame):
        first = stop.pending_signal() is None
        stop.request_stop(signum)
        if stop.in_native():  # HiGHS holds the thread: its callback stops it, then raises
            return
        if first:  # raised where Python swallows it, it comes again (interrupt.py)
            stop.resend_while_pending(signum)
        elif isinstance(sys.exc_info()[1], KeyboardInterrupt):
            return  # the first is on its way out (a finally or an except runs): let it go
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signum)

    stop.clear()
    names = ("SIGTERM", "SIGHUP", "SIGINT")
    wanted = [getattr(signal, name) for name in names if hasattr(signal, name)]
    # Ctrl-C as before (KeyboardInterrupt), unless a caller set SIGINT aside
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        wanted.remove(signal.SIGINT)
    try:  # swapped whole, whatever signal comes meanwhile
        previous = swap_handlers({sig: interrupt for sig in wanted})
    except ValueError:  # not the main thread
        previous = {}
    hook = sys.unraisablehook

    def quiet(unraisable: Any) -> None:
        # the signal's exception, raised where Python cannot raise it (an at-fork hook):
        # it is sent again (resend_while_pending), so no traceback for it
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)

    sys.unraisablehook = quiet
    completed = False
    try:
        yield
        completed = True
    except Exception as exc:  # an error while a signal's stop is under way came of the stop
        signum = stop.pending_signal()  # (a pool worker ended by it, a solve cut short)
        if not signum:
            raise
        if signum == signal.SIGINT:
            raise KeyboardInterrupt from exc
        raise Interrupted(signum) from exc
    finally:
        pending = stop.pending_signal()
        stop.clear()  # before the handlers go: no resent signal meets the default action
        if previous:
            swap_handlers(previous)
        sys.unraisablehook = hook
    if completed and pending:  # raised only where Python swallowed it: stop now
        if pending == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(pending)


#: how far past ``--time-limit`` a command may run before it is stopped: the solver
#: phases get the limit itself, and this leaves room for what follows a solve (extract,
#: verify, write); the issue's bound is 20%
DEADLINE_GRACE = 0.10
#: the last resort, for a solver phase with no interrupt point (a C call that neither
#: checks its own limit nor returns to Python): the process ends at this fraction past
DEADLINE_HARD = 0.18
#: the alarm repeats at this interval (s) until the command ends (:func:`_deadline`)
DEADLINE_REPEAT_S = 0.1


@contextmanager
def _deadline(time_limit: float | None, before: str = "the command could answer"):
    """Stop the command if it runs past ``time_limit`` x (1 + :data:`DEADLINE_GRACE`).

    An alarm (SIGALRM, main thread) raises :class:`~solver.errors.TimeLimitReached` where
    Python runs next: staged files are removed and pool workers stopped as for Ctrl-C. A
    solver phase that holds the main thread in C code without returning cannot be
    interrupted so; a watchdog thread then ends the process at :data:`DEADLINE_HARD` past
    the limit with the same message (pool workers die with it, PR_SET_PDEATHSIG; files
    are only renamed into place whole, so none is half-written). The watchdog is off with
    ``PROCURE_HARD_DEADLINE=0``, which runners of the CLI inside their own process (the
    test suite, bench/fuzz/fuzz.py) set: ending the process would end them. No limit: nothing."""
    import os
    import signal
    import threading
    import time

    from solver.errors import TimeLimitReached

    valid = time_limit is not None and math.isfinite(time_limit) and time_limit > 0
    if not valid or not hasattr(signal, "SIGALRM"):  # a bad limit: the body refuses it
        yield
        return
    import solver

    # a command-line process counts from its start (imports included); a runner of the CLI
    # inside its own process (tests, fuzz) from the command's start
    started = solver.IMPORTED_AT_S if in_own_process() else time.perf_counter()
    spent = time.perf_counter() - started
    global _LIMIT_STARTED
    _LIMIT_STARTED = started

    def alarm(signum, frame):
        from solver.core.backends.interrupt import in_native

        if in_native():  # HiGHS stops at the limit itself; the alarm repeats in Python
            return
        raise TimeLimitReached(time_limit, time.perf_counter() - started, before)

    try:
        previous = signal.signal(signal.SIGALRM, alarm)
    except ValueError:  # not the main thread (a test runner's worker): no alarm
        yield
        return
    stop = threading.Event()

    def watchdog() -> None:
        if stop.wait(max(1e-3, time_limit * (1.0 + DEADLINE_HARD) - spent)):
            return
        exc = TimeLimitReached(time_limit, time.perf_counter() - started, before)
        typer.echo(time_limit_message(exc), err=True)
        os._exit(EXIT_NO_PLAN)

    # repeated every DEADLINE_REPEAT_S until the body ends: an exception raised where
    # Python swallows it (a __del__ or a gc callback: "Exception ignored in ...") is raised
    # again a moment later, where it cannot be
    first = max(1e-3, time_limit * (1.0 + DEADLINE_GRACE) - spent)
    signal.setitimer(signal.ITIMER_REAL, first, DEADLINE_REPEAT_S)
    if in_own_process():
        threading.Thread(target=watchdog, daemon=True, name="procure-deadline").start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        stop.set()
        _LIMIT_STARTED = None


#: the ``time.perf_counter()`` the running command's ``--time-limit`` counts from (set by
#: :func:`_deadline`: the process's start in a command line, the command's own start in a
#: runner of the CLI); None outside a command with a limit
_LIMIT_STARTED: float | None = None


def time_left(time_limit: float | None, doing: str = "reading the problem and the catalog"):
    """What is left of the command's ``--time-limit`` now (None: no limit), for the solver
    phases: the limit counts from the process's start (:func:`_deadline`), so what the
    start, the imports and the reading of the inputs took is not given to the solver a
    second time (given the whole limit again, a solver would be stopped by the deadline
    with a plan in hand).

    Raises
    ------
    NoPlanError
        Nothing is left: the limit ran out while ``doing``.
    """
    import time

    from solver.errors import NoPlanError

    if time_limit is None or _LIMIT_STARTED is None:
        return time_limit
    spent = time.perf_counter() - _LIMIT_STARTED
    if spent >= time_limit:
        raise NoPlanError(
            f"the time limit ({time_limit:g} s) ran out while {doing} ({spent:.1f} s), "
            "before any plan was found",
            field="--time-limit",
            fix="give it more time (--time-limit S), or make the problem smaller",
        )
    return time_limit - spent


def say_if_stopped(plan, time_limit: float | None) -> None:
    """One line on stderr when the plan shown is the best found when the time limit
    stopped the solver (``plan.stopped_at_time_limit``): verified, with its proven gap.
    The exit code stays 0: a verified plan is shown (README, "Exit codes")."""
    if not getattr(plan, "stopped_at_time_limit", False):
        return
    gap = "unknown" if plan.gap is None else f"{100 * plan.gap:.2f}%"
    limit = "" if time_limit is None else f" --time-limit {time_limit:g} s:"
    typer.echo(
        f"note: stopped at the time limit:{limit} this is the best plan found, verified, "
        f"within {gap} of the optimum (proven gap), not proven optimal\n"
        "  fix: give it more time (--time-limit S) for a smaller gap",
        err=True,
    )


def in_own_process() -> bool:
    """Whether this process is a command line of its own (not a runner of the CLI inside
    its process, the test suite or bench/fuzz/fuzz.py, which set ``PROCURE_HARD_DEADLINE=0``)."""
    import os

    return os.environ.get("PROCURE_HARD_DEADLINE", "1") != "0"


def time_limit_message(exc: BaseException) -> str:
    """What a command stopped at its time limit says: the limit, when, and what was written."""
    from solver.outputs.files import published

    done = published()
    what = (
        "every output was written before it stopped: " + ", ".join(str(p) for p in done)
        if done
        else "nothing was written"
    )
    return (
        f"error: stopped at the time limit: --time-limit {exc.limit_s:g} s ran out "
        f"(after {exc.elapsed_s:.1f} s) before {exc.before}; {what}\n"
        "  fix: give it more time (--time-limit S), or make the problem smaller"
    )


def interrupted_message(exc: BaseException) -> tuple[str, int]:
    """What an interrupted command says, and its exit code: the signal, and exactly what
    was written (nothing, or every output of the command: a publication is whole)."""
    from solver.errors import Interrupted
    from solver.outputs.files import published

    name = exc.name if isinstance(exc, Interrupted) else "SIGINT"
    code = exc.exit_code if isinstance(exc, Interrupted) else EXIT_INTERRUPTED
    done = published()
    if done:
        what = "every output was written before it stopped: " + ", ".join(str(p) for p in done)
    else:
        what = "nothing was written (outputs are replaced whole or not at all)"
    return f"interrupted ({name}): {what}", code


def catalog_inputs(catalog: Path | None) -> list[tuple[str, Path]]:
    """The catalog tables a command reads, as (what, path) for
    :func:`solver.outputs.files.check_not_inputs`."""
    from solver.inputs.catalog import DEFAULT_CATALOG_DIR, SCHEMAS

    folder = Path(catalog) if catalog is not None else DEFAULT_CATALOG_DIR
    return [(f"catalog table {name}", folder / name) for name in SCHEMAS]


def _run(
    debug: bool,
    body: Callable[[], None],
    time_limit: float | None = None,
    before: str = "the command could answer",
) -> None:
    """Run a command body; turn user errors into one message and a non-zero exit.

    ``time_limit`` (the command's ``--time-limit``): the body is stopped if it runs past
    it by :data:`DEADLINE_GRACE` (:func:`_deadline`), with a clear message (it ran out
    before ``before``) and exit 4."""
    from solver.errors import InfeasibleError, NoPlanError
    from solver.outputs.files import reset_published
    from solver.solve import VerificationError

    reset_published()
    try:
        with _signals_interrupt(), _deadline(time_limit, before):
            body()
    except ProcureError as exc:
        if debug:
            raise
        if isinstance(exc, VerificationError):
            typer.echo(f"internal error (a bug in procure): {exc.render()}", err=True)
            raise typer.Exit(EXIT_BUG) from None
        typer.echo(f"error: {exc.render()}", err=True)
        code = (
            EXIT_INFEASIBLE
            if isinstance(exc, InfeasibleError)
            else EXIT_NO_PLAN
            if isinstance(exc, NoPlanError)
            else EXIT_USER_ERROR
        )
        raise typer.Exit(code) from None
    except OSError as exc:
        if debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None
    except typer.Exit:
        raise
    except Exception as exc:  # anything else is a bug: say so, never a bare traceback
        if debug:
            raise
        from solver.web.redact import redact  # no connection string in any message

        typer.echo(
            f"internal error (a bug in procure): {type(exc).__name__}: {redact(str(exc))}\n"
            "  fix: report it with the command and its input files; --debug shows where",
            err=True,
        )
        raise typer.Exit(EXIT_BUG) from None
    except KeyboardInterrupt as exc:  # Ctrl-C, and SIGTERM and SIGHUP (Interrupted)
        if debug:
            raise
        if isinstance(exc, TimeLimitReached):
            typer.echo(time_limit_message(exc), err=True)
            if in_own_process():  # no teardown of a large model (seconds when loaded)
                import os
                import sys

                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(EXIT_NO_PLAN)
            raise typer.Exit(EXIT_NO_PLAN) from None
        message, code = interrupted_message(exc)
        typer.echo(message, err=True)
        raise typer.Exit(code) from None


def _check_format(format: str, *allowed: str) -> None:
    """Refuse a --format value the command does not write."""
    if format not in allowed:
        choices = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise ProcureError(f"unknown format {format!r}", field="--format", fix=f"use {choices}")


def _check_choice(value: str, option: str, *allowed: str) -> None:
    """Refuse a value of a fixed-value option that the command does not know."""
    if value not in allowed:
        choices = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise ProcureError(f"unknown {option} {value!r}", field=option, fix=f"use {choices}")


def _choices(*values: str) -> dict:
    """typer.Option arguments for an option with fixed values: listed in --help and
    completed by the shell. The command refuses any other value itself, with an
    ``error:``/``fix:`` message (exit 2)."""
    return {
        "metavar": "[" + "|".join(values) + "]",
        "autocompletion": lambda incomplete: [v for v in values if v.startswith(incomplete)],
    }


def positive(fix: str, *, whole: bool = False, at_most: float = 1e15) -> dict:
    """typer.Option arguments for a number that must be finite and above 0 (and at most
    ``at_most``): a bad value is refused while the command line is read, with exit 2 and
    a message naming the option and the fix.

    Parameters
    ----------
    fix
        What to write instead, e.g. ``"e.g. --tokens 1e12"``.
    whole
        The option is an integer (``--tp 2``), not a float.
    at_most
        The largest value that makes sense (1 for a fraction).
    """
    limit = f" and at most {at_most:g}" if at_most < 1e15 else ""

    def parse(value: object) -> float | int | None:
        if value is None:
            return None
        try:
            number = int(value) if whole else float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            kind = "a whole number" if whole else "a number"
            raise typer.BadParameter(f"{value!r} is not {kind}\n  fix: {fix}") from None
        if not (math.isfinite(number) and 0 < number <= at_most):
            raise typer.BadParameter(
                f"{value}; it must be a finite number above 0{limit}\n  fix: {fix}"
            )
        return number

    return {"parser": parse}


def price_day() -> dict:
    """typer.Option arguments for a price date: a day (``YYYY-MM-DD``) or ``unknown``;
    anything else is refused while the command line is read (exit 2)."""
    from solver.inputs.provenance import is_price_date

    def parse(value: object) -> str | None:
        if value is None or is_price_date(str(value)):
            return value  # type: ignore[return-value]
        raise typer.BadParameter(
            f"{value!r} is not a price date\n  fix: give the day the prices were observed "
            "as YYYY-MM-DD, or unknown"
        )

    return {"parser": parse}


QuotesOpt = Annotated[
    Path | None,
    typer.Option(
        "--quotes",
        help="Vendor quotes file (CSV; docs/concepts/prices.md, Vendor quotes) applied over "
        "the catalog (instead of the problem's quotes:)",
    ),
]


RatesOpt = Annotated[
    Path | None,
    typer.Option(
        "--exchange-rates",
        help="Exchange-rate file (CSV with the columns of catalogs/exchange_rates.csv) whose "
        "rates replace the catalog's for the currencies it names (instead of the problem's "
        "exchange_rates:)",
    ),
]


def _load_catalog(directory: Path | None):
    from solver.inputs.catalog import load_catalog

    return load_catalog(directory, cache_dir=cache_dir())


def cache_dir() -> Path | None:
    """The folder where ``procure`` keeps what it may reuse between runs (the checked
    catalog): ``$PROCURE_CACHE_DIR``, else ``$XDG_CACHE_HOME/procure``, else
    ``~/.cache/procure``; ``PROCURE_CACHE_DIR=off`` keeps nothing."""
    import os

    chosen = os.environ.get("PROCURE_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "procure"


def _with_quotes(
    catalog,
    problem,
    problem_file: Path | None,
    quotes: Path | None,
    *,
    from_problem: bool = True,
    rates: Path | None = None,
):
    """The catalog with the exchange rates of ``--exchange-rates``, else (``from_problem``)
    of the problem's ``exchange_rates:`` (:func:`_with_rates`), then the vendor quotes of
    ``--quotes``, else (``from_problem``) of the problem's ``quotes:`` (each relative to the
    problem file); unchanged without any.

    The file is read here (the edge); :func:`solver.inputs.quotes.apply_quotes` is pure. A
    quote is checked against the problem's start, or today when it states none; it is
    converted at the rates in force after the exchange-rate file.
    """
    from datetime import date

    catalog = _with_rates(catalog, problem, problem_file, rates, from_problem=from_problem)
    quotes = _quotes_file(problem, problem_file, quotes, from_problem=from_problem)
    if quotes is None:
        return catalog
    on = problem.start if problem.start is not None else date.today()
    return _apply_quotes_file(catalog, quotes, on)


def _quotes_file(
    problem, problem_file: Path | None, quotes: Path | None, *, from_problem: bool = True
) -> Path | None:
    """The quotes file a command applies: ``--quotes``, else the problem's ``quotes:``
    (relative to the problem file), else none."""
    if quotes is None and (problem.quotes is None or not from_problem):
        return None
    if quotes is None:
        base = Path(problem_file).parent if problem_file is not None else Path()
        quotes = base / problem.quotes
    return quotes


def _rates_file(
    problem, problem_file: Path | None, rates: Path | None, *, from_problem: bool = True
) -> Path | None:
    """The exchange-rate file a command applies: ``--exchange-rates``, else the problem's
    ``exchange_rates:`` (relative to the problem file), else none."""
    named = getattr(problem, "exchange_rates", None) if from_problem else None
    if rates is not None or named is None:
        return rates
    base = Path(problem_file).parent if problem_file is not None else Path()
    return base / named


def _with_rates(
    catalog, problem, problem_file: Path | None, rates: Path | None, *, from_problem: bool = True
):
    """The catalog with the exchange-rate file of :func:`_rates_file` applied
    (:func:`apply_rates_file`); unchanged without one."""
    path = _rates_file(problem, problem_file, rates, from_problem=from_problem)
    return catalog if path is None else apply_rates_file(catalog, path)


def apply_rates_file(catalog, rates: Path, *, fix: str | None = None):
    """Read an exchange-rate file (the edge) and apply it over the catalog's rates
    (:func:`solver.inputs.exchange_rates.with_exchange_rates`)."""
    from solver.inputs.exchange_rates import parse_exchange_rates, with_exchange_rates
    from solver.inputs.yamlio import read_text_file

    text = read_text_file(
        rates,
        what="exchange-rate file",
        fix=fix
        or "give the path of an exchange-rate CSV (--exchange-rates FILE, or exchange_rates: "
        "in the problem, relative to the problem file)",
    )
    return with_exchange_rates(catalog, parse_exchange_rates(text, str(rates)))


def _apply_quotes_file(catalog, quotes: Path, on):
    """Read a quotes file (the edge) and apply it (:func:`solver.inputs.quotes.apply_quotes`)."""
    from solver.inputs.quotes import apply_quotes, parse_quotes
    from solver.inputs.yamlio import read_text_file

    text = read_text_file(
        quotes,
        what="quotes file",
        fix="give the path of a quotes CSV (--quotes FILE, or quotes: in the problem, "
        "relative to the problem file)",
    )
    return apply_quotes(catalog, parse_quotes(text, str(quotes)), on=on)


def _with_paths(
    plan,
    problem_file: Path | None,
    catalog,
    prices: list[dict] | None = None,
    quotes: dict | None = None,
    rates: Path | None = None,
):
    """The plan with the files it was solved from recorded beside its digests (the
    exchange-rate file, the price files and the quotes file applied, in order, so that it
    can be re-verified)."""
    inputs = plan.inputs.model_copy(
        update={
            "problem_file": None if problem_file is None else str(Path(problem_file).resolve()),
            "catalog_dir": None if catalog is None else str(Path(catalog).resolve()),
            "prices": prices or [],
            "quotes": quotes,
            "exchange_rates": None if rates is None else str(Path(rates).resolve()),
        }
    )
    return plan.model_copy(update={"inputs": inputs})


def _check_gap_and_limit(gap: float, time_limit: float | None) -> None:
    if gap < 0 or (time_limit is not None and time_limit <= 0):
        raise ProcureError(
            "gap must be >= 0 and time limit > 0",
            field="--gap/--time-limit",
            fix="e.g. --gap 0.001 --time-limit 60",
        )


def cli_workers(workers: int) -> int:
    """``--workers`` capped at this machine's CPUs, saying so on stderr when it is
    (:func:`solver.analyses.runner.capped_workers`; below 1 is refused)."""
    from solver.analyses.runner import capped_workers

    n, message = capped_workers(workers)
    if message:
        typer.echo(f"note: {message}", err=True)
    return n
