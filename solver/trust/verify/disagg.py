"""Disaggregated serving lines recomputed: each prefill and decode line's capacity from the
catalog and the model (KV bytes from the model's shape, the link from the offerings'
NICs), the KV transfer each prefill line relies on, the TTFT with it, and what each group
serves: the least of its prefill and its decode capacity."""

from __future__ import annotations

import numpy as np

from solver import physics
from solver.inputs.presets import ModelSpec
from solver.inputs.problem import InferenceWorkload
from solver.physics.constants import ETA_LINK, bytes_per_value
from solver.physics.disagg import decode_pool, prefill_pool
from solver.plan import LineItem
from solver.trust.verify.context import _close, _le
from solver.trust.verify.run import _Run
from solver.trust.verify.unit_facts import _capacity_share

#: NIC classes, Gbit/s per unit, restated (solver.core.compile.disagg.NIC_CLASSES_GBPS).
_NIC_CLASSES = (3200.0, 1600.0, 400.0, 100.0, 25.0, 0.0)


def _kv_gb_per_request(w: InferenceWorkload, spec: ModelSpec) -> float:
    """KV cache of one prompt, GB: 2 x layers x kv_heads x head_dim x bytes x prompt
    tokens (layers x latent x bytes with multi-head latent attention)."""
    b = bytes_per_value(w.kv_precision)
    latent = float(getattr(spec, "kv_latent_dim", 0.0) or 0.0)
    layers = float(spec.layers or 0.0)
    per_token = (
        layers * latent * b
        if latent > 0
        else 2.0 * layers * float(spec.kv_heads or 0.0) * float(spec.head_dim or 0.0) * b
    )
    return per_token * w.prompt_tokens / 1e9


def check_disagg_line(
    run: _Run, item: LineItem, u: dict, w: InferenceWorkload, spec: ModelSpec
) -> None:
    """A prefill or decode line: the KV size and link class recomputed; a decode line's
    capacity recomputed now, a prefill line's once every decode line is known
    (:func:`settle_disagg`)."""
    c = run.c
    kv_gb = _kv_gb_per_request(w, spec)
    c.check(
        "KV cache per request recomputed",
        item.kv_gb_per_request is not None and _close(item.kv_gb_per_request, kv_gb, 1e-6),
        f"{item.offering}: {item.kv_gb_per_request} vs {kv_gb:.6g} GB",
    )
    nic = float(u["network_gbps"])
    label = f"network/nic{next(k for k in _NIC_CLASSES if nic >= k):g}"
    c.check("KV link is the unit's NIC class", item.kv_link == label, f"{item.offering}")
    c.check(
        "architecture of a prefill or decode line",
        item.architecture == "disaggregated" and w.architecture != "aggregated",
        f"{item.offering}",
    )
    key = (item.workload, item.period, item.block, item.provider, item.region, item.kv_link)
    run.disagg_lines[key].append((item, u, kv_gb))


def _dev(w: InferenceWorkload, u: dict) -> physics.Device:
    table = physics.one_row_table(u["acc"])
    return physics.device_figures(table, w.weight_precision, np.array([u["nvlink"]]), w.runtime)


def settle_disagg(run: _Run) -> None:
    """Per group (workload, period, block, provider, region, link): every decode line's
    capacity; every prefill line's transfer (at the slowest per-replica NIC share of the
    line and of the group's decode lines), TTFT and capacity; the group serves the least
    of its two sums (``served``)."""
    c, p = run.c, run.p
    for key, lines in run.disagg_lines.items():
        wname = key[0]
        w = run.p.workload(wname)
        assert isinstance(w, InferenceWorkload)  # only online workloads disaggregate
        spec = run.specs[wname]
        model = physics.served_model(spec, w.weight_precision, w.kv_precision)
        o = float(w.output_tokens)
        total = {"prefill": 0.0, "decode": 0.0}
        largest = {"prefill": 0.0, "decode": 0.0}
        decode_share = np.inf
        for item, u, kv_gb in lines:
            if item.pool_role != "decode":
                continue
            d = item.tp_degree
            reps = u["apu"] // d
            res = decode_pool(model, prompt_tokens=w.prompt_tokens, output_tokens=o,
                              tpot_slo_s=w.tpot_slo_s, d=np.array([float(d)]), dev=_dev(w, u),
                              memory_headroom=p.memory_headroom,
                              load=w.load_percentile)  # fmt: skip
            c.check("decode replica meets memory and TPOT (physics recomputed)",
                    res.reason[0] == "", f"{item.offering}: {res.reason[0]}")  # fmt: skip
            nic_tps = u["network_gbps"] * ETA_LINK / 8.0 / kv_gb * o
            per_unit = min(reps * float(res.tokens_per_s[0]), nic_tps)
            cap = per_unit * item.units * _capacity_share(p, w, u, False, spec)
            c.check("decode capacity recomputed", _close(cap, item.capacity_tokens_per_s, 1e-6),
                    f"{item.offering}: {item.capacity_tokens_per_s:.3f} vs {cap:.3f}")  # fmt: skip
            total["decode"] += cap
            largest["decode"] = max(largest["decode"], cap / max(item.units, 1e-12))
            decode_share = min(decode_share, u["network_gbps"] / reps)
        for item, u, kv_gb in lines:
            if item.pool_role != "prefill":
                continue
            d = item.tp_degree
            reps = u["apu"] // d
            link = min(u["network_gbps"] / reps, decode_share)
            needed_s = kv_gb * 8.0 / (link * ETA_LINK)
            x = item.kv_transfer_s if item.kv_transfer_s is not None else np.inf
            c.check("KV transfer covers the plan's link", _le(needed_s, x, 1e-6),
                    f"{item.offering}: {x:.4f} s < {needed_s:.4f} s")  # fmt: skip
            pre = prefill_pool(model, prompt_tokens=w.prompt_tokens, ttft_slo_s=w.ttft_slo_s,
                               d=np.array([float(d)]), dev=_dev(w, u), transfer_s=x,
                               replicas_per_unit=np.array([float(reps)]),
                               nic_gbit_per_s=np.array([u["network_gbps"]]),
                               memory_headroom=p.memory_headroom,
                               load=w.load_percentile)  # fmt: skip
            c.check("prefill replica meets memory and TTFT with the KV transfer",
                    pre.reason[0] == "" and float(pre.ttft_s[0]) <= w.ttft_slo_s + 1e-9,
                    f"{item.offering}: {pre.reason[0]} {float(pre.ttft_s[0]):.4f} s")  # fmt: skip
            cap = float(pre.requests_per_s[0]) * reps * o * item.units
            cap *= _capacity_share(p, w, u, False, spec)
            c.check("prefill capacity recomputed", _close(cap, item.capacity_tokens_per_s, 1e-6),
                    f"{item.offering}: {item.capacity_tokens_per_s:.3f} vs {cap:.3f}")  # fmt: skip
            total["prefill"] += cap
            largest["prefill"] = max(largest["prefill"], cap / max(item.units, 1e-12))
        run.served[(wname, key[1], key[2], -1)] += min(total["prefill"], total["decode"])
        run.disagg_groups[(wname, key[1], key[2])].append(
            (total["prefill"], total["decode"], largest["prefill"], largest["decode"])
        )


def n_plus_1_left(run: _Run, key: tuple, total: float, largest: float) -> float:
    """Output tokens/s a workload serves in (workload, period, block) ``key`` after the
    worst loss of one unit: an aggregated one (``total`` of its aggregated units less the
    ``largest``), or one prefill or decode unit of a group (that group then serves the
    least of its prefill less its largest prefill unit and its decode less its largest
    decode unit); the other groups serve min(prefill, decode) each."""
    groups = run.disagg_groups.get(key, [])
    served = sum(min(pre, dec) for pre, dec, _, _ in groups)
    cases = [total - largest + served] if largest > 0 or not groups else []
    for pre, dec, r_max, c_max in groups:
        lost = min(pre, dec) - max(0.0, min(pre - r_max, dec - c_max))
        cases.append(total + served - lost)
    return min(cases)
