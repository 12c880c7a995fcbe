"""Request-size buckets (tokens): the edges Mélange profiles on and the order a problem's
traffic mix lists them in.
"""

from __future__ import annotations

from collections.abc import Sequence

# Request-size buckets (tokens): the edges Mélange profiles on (Griggs et al. 2024,
# litone01/melange-release lb/lb_policies.py get_size_bucket_idx: a size belongs to the
# first bucket whose upper edge it does not exceed) and problems/traffic-mix-measured.yaml
# uses. Sizes over the last edge belong to no bucket (the arena mix drops them).
BUCKET_EDGES_TOKENS: tuple[int, ...] = (0, 25, 100, 250, 500, 1000, 2000)


def bucket_index(tokens: float, edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> int:
    """The bucket a request size falls in (upper edge inclusive), or -1 beyond the last.

    >>> bucket_index(25), bucket_index(26), bucket_index(2001)
    (0, 1, -1)
    """
    for i in range(len(edges) - 1):
        if tokens <= edges[i + 1]:
            return i
    return -1


def bucket_midpoints(edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> list[int]:
    """Representative size of each bucket: its midpoint, rounded down (12, 62, 175, ...)."""
    return [(edges[i] + edges[i + 1]) // 2 for i in range(len(edges) - 1)]


def bucket_order(edges: Sequence[int] = BUCKET_EDGES_TOKENS) -> list[tuple[int, int]]:
    """(prompt bucket, output bucket) in the order of problems/traffic-mix-measured.yaml.

    Output buckets from the longest down, prompt buckets from the shortest up: the
    orientation of the Mélange arena traffic matrix the problem's mix is read from.
    """
    n = len(edges) - 1
    return [(i, j) for j in reversed(range(n)) for i in range(n)]
