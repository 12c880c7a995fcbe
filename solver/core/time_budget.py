"""A time limit held end to end and shared among a solve's phases by the CPU received.

A fixed split of the wall clock (pricing until 50% of the limit, cuts until 65%, ...)
gives each phase its share only on a quiet machine. Under load the phases before the
split (the process's start, the compile) take a larger part of the wall clock, and a
phase with a fixed cost per round (one LP, then its pricing) gets a window too short for
a single round, so its rounds never run.

A :class:`Budget` measures what this process actually receives: the CPU seconds it used
(``time.process_time``, every thread) per wall second since the budget started. The CPU
still to come is that rate times the wall seconds left, less a reserve for what follows
the solver (the plan, the independent verifier, the output). Phases are given shares of
that CPU, counted from where they begin, and a phase starts another round only when its
last round's CPU cost fits in what is left of its share (:meth:`Budget.affords`), so no
round is started that the limit would cut off with nothing to show. The rate is measured
again at every decision: when another job starts half-way, the shares shrink with it.

Pure functions of the clocks; no I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: the rate is not trusted over a window shorter than this (s): it is 1 until then
MIN_WINDOW_S = 0.5
#: a rate below this (a process stopped, or a burst of load) is counted as this
MIN_RATE = 0.02
#: share of the time left when the solver starts kept for the plan, the verifier and the
#: output (the CLI's stop is at the limit + 10% besides: DEADLINE_GRACE)
RESERVE_SHARE = 0.1
#: a round is started only if its last cost times this fits in what is left
ROUND_SAFETY = 1.25


@dataclass
class Budget:
    """``limit_s`` seconds of wall clock from ``wall0`` (``time.perf_counter()``), shared
    by the CPU this process receives (module docstring). ``limit_s`` None: no limit (every
    question is answered "yes, go on").

    Parameters
    ----------
    limit_s
        The seconds this budget holds (None: unlimited).
    wall0, cpu0
        ``time.perf_counter()`` and ``time.process_time()`` when it started.
    reserve_s
        Seconds kept at the end for the plan, the verifier and the output.
    rate_wall0
        ``time.perf_counter()`` when ``cpu0`` was read, where that is later than
        ``wall0`` (:meth:`of` with a start in the past): the rate is measured from it.
    """

    limit_s: float | None
    wall0: float = field(default_factory=time.perf_counter)
    cpu0: float = field(default_factory=time.process_time)
    reserve_s: float = 0.0
    #: ``time.perf_counter()`` when ``cpu0`` was read, if later than ``wall0`` (None: then)
    rate_wall0: float | None = None

    @classmethod
    def of(cls, limit_s: float | None, wall0: float | None = None) -> Budget:
        """A budget of ``limit_s`` from ``wall0`` (default now), with
        :data:`RESERVE_SHARE` of it kept for what follows the solver. The rate is
        measured from now: a ``wall0`` in the past (the solve's start, before the
        compile) with the CPU counted from now would take the compile's wall seconds as
        time without CPU (10,000 x 200 x 12 at load 4: a rate of 0.35 for 0.7 received,
        and every phase's share halved)."""
        now = time.perf_counter()
        wall0 = now if wall0 is None else wall0
        reserve = 0.0 if limit_s is None else RESERVE_SHARE * limit_s
        return cls(limit_s, wall0, time.process_time(), reserve, now)

    def left_s(self) -> float | None:
        """Wall seconds left before the reserve (None: no limit; may be negative)."""
        if self.limit_s is None:
            return None
        return self.limit_s - self.reserve_s - (time.perf_counter() - self.wall0)

    def rate(self) -> float:
        """CPU seconds this process received per wall second since the budget started (1
        over a window shorter than :data:`MIN_WINDOW_S`; at least :data:`MIN_RATE`)."""
        wall = time.perf_counter() - (self.wall0 if self.rate_wall0 is None else self.rate_wall0)
        if wall < MIN_WINDOW_S:
            return 1.0
        return max(MIN_RATE, (time.process_time() - self.cpu0) / wall)

    def cpu_left_s(self) -> float | None:
        """CPU seconds still to come before the reserve, at the rate received so far."""
        left = self.left_s()
        return None if left is None else max(0.0, left) * self.rate()

    def phase(self, share: float) -> Phase:
        """A phase that may use ``share`` of the CPU still to come from now."""
        cpu = self.cpu_left_s()
        return Phase(self, None if cpu is None else share * cpu, time.process_time())


@dataclass
class Phase:
    """One phase's share of a :class:`Budget`: ``cpu_s`` CPU seconds from ``cpu0``
    (None: unlimited); rounds are costed as they end (:meth:`round_done`)."""

    budget: Budget
    cpu_s: float | None
    cpu0: float
    last_round_cpu_s: float = 0.0
    rounds: int = 0
    _round0: float = field(default_factory=time.process_time)

    def used_s(self) -> float:
        """CPU seconds this phase has used."""
        return time.process_time() - self.cpu0

    def round_done(self) -> None:
        """Mark the end of a round: its CPU cost is the estimate of the next one's."""
        now = time.process_time()
        self.last_round_cpu_s = now - self._round0
        self._round0 = now
        self.rounds += 1

    def affords(self, round_cpu_s: float | None = None) -> bool:
        """Whether one more round (``round_cpu_s``, default the last round's cost) fits in
        this phase's share and in the CPU the budget still expects (:data:`ROUND_SAFETY`)."""
        if self.cpu_s is None:
            return True
        cost = ROUND_SAFETY * (self.last_round_cpu_s if round_cpu_s is None else round_cpu_s)
        left = self.budget.cpu_left_s()
        return self.used_s() + cost <= self.cpu_s and (left is None or cost <= left)

    def wall_s(self, share: float = 1.0) -> float | None:
        """Wall seconds for a solver call that should use ``share`` of what is left of
        this phase's CPU, at the rate received (at least 0.01 s; None: no limit)."""
        if self.cpu_s is None:
            return None
        left_cpu = max(0.0, self.cpu_s - self.used_s()) * share
        wall_left = self.budget.left_s()
        wall = left_cpu / self.budget.rate()
        return max(0.01, min(wall, max(0.0, wall_left if wall_left is not None else wall)))
