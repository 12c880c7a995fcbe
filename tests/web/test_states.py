"""Job and approval states are enums whose members are the words the database and the JSON
already hold: a stored row, a page and an API answer read the same as before."""

from __future__ import annotations

import json

from solver.web.store.accounts import PLAN_STATUSES, Decision, PlanStatus
from solver.web.store.models import JOB_OPEN, JOB_STATUSES, JobStatus


def test_job_statuses_are_the_stored_words():
    # the words of the jobs table's rows (and of GET /api/jobs/ID), in their order
    assert JOB_STATUSES == (
        "queued",
        "running",
        "done",
        "failed",
        "cancelled",
        "interrupted",
        "timed_out",
    )  # timed_out: issue 50's time limits
    assert JOB_OPEN == ("queued", "running")
    assert all(type(s) is str for s in JOB_STATUSES + JOB_OPEN)  # plain words, not members
    assert json.dumps({"status": JobStatus.INTERRUPTED}) == '{"status": "interrupted"}'
    assert "done" == JobStatus.DONE and f"{JobStatus.QUEUED}" == "queued"


def test_approval_states_and_decisions_are_the_stored_words():
    assert PLAN_STATUSES == ("draft", "submitted", "approved", "rejected", "void")
    assert [d.value for d in Decision] == ["approve", "reject"]  # the routes' last segment
    assert f"/plans/7/{Decision.APPROVE}" == "/plans/7/approve"
    assert json.dumps([PlanStatus.VOID, Decision.REJECT]) == '["void", "reject"]'
