"""The workspace shows the replay beside the plan (issue 47 Build 3): the plan page links to
``/plans/{id}/replay``, which replays the stored seed plan's serving fleets with the
synthetic traffic of its load curve and gives the verdict per block."""

from __future__ import annotations

import re

import pytest

from tests.web.test_signoff import seed_workspace


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """:func:`tests.web.test_signoff.seed_workspace` for this module."""
    yield from seed_workspace(tmp_path_factory)


def test_the_plan_page_links_to_the_replay_and_it_gives_every_block(ws):
    _, clients = ws
    viewer = clients["viewer"]
    assert 'href="/plans/1/replay"' in viewer.get("/plans/1").text
    page = viewer.get("/plans/1/replay")
    assert page.status_code == 200
    text = page.text
    # the seed serves chat-13b over 3 periods x 3 load blocks, each with all units and with
    # one lost: 18 block rows, each with a verdict (the same replay as `procure replay`,
    # whose verdict on the seed tests/replay/test_replay_plan.py checks)
    rows = re.findall(r'<tr class="(meets|misses)">', text)
    assert len(rows) == 18
    assert text.count("N+1 lost") == 9
    assert 'id="replay-verdict"' in text and "requests replayed" in text
    assert "Limits TTFT" in text and 'href="/plans/1"' in text


def test_a_missing_plan_is_404(ws):
    _, clients = ws
    assert clients["viewer"].get("/plans/999/replay").status_code == 404
