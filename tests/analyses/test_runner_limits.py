"""Distributed runs and local pools within limits (issue 34).

Before issue 34: a scheduler address that accepts and never answers made the Dask client
wait; a peer that is not Dask (a web server) sent bytes that the client read as a message
length of exabytes (an allocation without bound, or exit 70); ``--workers 100000`` forked
until the machine refused. Now: a message naming --scheduler and exit 2, and workers
capped at the CPUs with a note.
"""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest
from typer.testing import CliRunner

from conftest import CHAT_WORKLOAD, offering, write_catalog
from solver.analyses.runner import capped_workers, dask_client, run_tasks
from solver.cli import app
from solver.errors import ProcureError

runner = CliRunner()
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class _Peer:
    """A TCP listener on localhost that accepts and then sends ``greeting`` (None: nothing)
    and holds the connection open until closed."""

    def __init__(self, greeting: bytes | None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.greeting, self.held = greeting, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            if self.greeting is not None:
                conn.sendall(self.greeting)

    def close(self) -> None:
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def peer(request):
    p = _Peer(request.param)
    yield p
    p.close()


@pytest.mark.parametrize("peer", [None], indirect=True)
def test_a_scheduler_that_never_answers_times_out_with_a_message(peer):
    started = time.perf_counter()
    with pytest.raises(ProcureError) as err:
        dask_client(peer.address, timeout_s=0.5)
    # 0.5 s asked: an answer, not a wait without end (the bound is loose: the first call
    # imports dask, and a loaded machine running the suite in parallel took 5.0 s)
    assert time.perf_counter() - started < 30.0
    assert "sent nothing in 0.5 s" in err.value.message and err.value.field == "--scheduler"


@pytest.mark.parametrize("peer", [b"HTTP/1.1 400 Bad Request\r\n\r\n"], indirect=True)
def test_a_peer_that_is_not_dask_is_refused(peer):
    # b"HTTP/1.1" read as Dask's 8-byte length is 3.5e18 bytes: refused before any read
    with pytest.raises(ProcureError) as err:
        dask_client(peer.address, timeout_s=2.0)
    assert "is not a Dask scheduler" in err.value.message


def test_nothing_listening_is_named():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nothing listens on
    with pytest.raises(ProcureError, match="cannot reach a scheduler"):
        dask_client(f"tcp://127.0.0.1:{port}", timeout_s=2.0)


@pytest.mark.parametrize("peer", [b"HTTP/1.1 400 Bad Request\r\n\r\n"], indirect=True)
def test_run_tasks_on_a_non_dask_peer_raises_the_message(peer):
    with pytest.raises(ProcureError, match="not a Dask scheduler"):
        run_tasks(lambda shared, t: t, [1, 2], scheduler=peer.address)


@pytest.mark.parametrize("peer", [b"HTTP/1.1 400 Bad Request\r\n\r\n"], indirect=True)
def test_sensitivity_on_a_non_dask_peer_exits_2_not_70(tmp_path, peer):
    cat = write_catalog(
        tmp_path / "cat",
        [offering("h1", "h100-sxm", 1, 4.0), offering("l4", "l4", 1, 1.0, nvlink=False)],
    )
    prob = tmp_path / "p.yaml"
    prob.write_text(
        "name: cli\nhorizon_months: 1\nmodes: [on_demand]\nworkloads:\n" + CHAT_WORKLOAD
    )
    args = ["sensitivity", str(prob), "--catalog", str(cat), "--scheduler", peer.address, "-q"]
    out = runner.invoke(app, args)
    assert out.exit_code == 2, out.output
    assert "not a Dask scheduler" in out.output and "--scheduler" in out.output


def test_workers_are_capped_at_the_cpus():
    assert capped_workers(1) == (1, None)
    n, message = capped_workers(100_000)
    assert n == CPUS and f"--workers 100000 is more than this machine's {CPUS} CPUs" in message
    with pytest.raises(ProcureError, match="1 or more"):
        capped_workers(0)
