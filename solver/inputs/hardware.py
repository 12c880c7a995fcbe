"""What hardware each workload may run on: accelerator and vendor lists, allow
and deny, on the problem and on each workload, and the vendor a serving runtime runs on.

A workload's lists narrow the problem's: it may use an accelerator that every list at both
levels allows and its runtime (``vllm-cuda``: NVIDIA) runs on. :func:`hardware_rules`
resolves the names against the catalog (ids or aliases, as ``procure catalog list
accelerators`` shows them; vendors as catalogs/accelerators.csv writes them) and refuses,
with one message naming the field and the fix, a name the catalog does not know, an entry
another list leaves out (it would be silently ignored) and lists that leave a workload no
accelerator at all. Compile and the verifier both read the rules it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.errors import ProcureError, closest
from solver.inputs.catalog import Catalog
from solver.inputs.problem import (
    BatchInferenceWorkload,
    InferenceWorkload,
    Problem,
    TrainingWorkload,
)
from solver.physics.hardware import RUNTIME_BY_VENDOR_OF

#: Each vendor's hardware as people name it (the plan's notes).
VENDOR_HARDWARE: dict[str, str] = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "intel": "Intel Gaudi",
    "aws": "AWS Trainium/Inferentia",
    "google": "Google TPU",
}

#: The lists of a rule, in the order compile applies them (a pool left out by an earlier
#: one is counted there, not again).
LISTS: tuple[str, ...] = (
    "runtime",
    "accelerators",
    "vendors",
    "exclude_accelerators",
    "exclude_vendors",
)


@dataclass(frozen=True)
class HardwareRule:
    """The accelerators one workload may run on, as catalog ids and vendor names.

    Attributes
    ----------
    accelerators
        Allowed accelerator ids (the problem's list within the workload's); None: any.
    vendors
        Allowed vendors; None: any.
    exclude_accelerators, exclude_vendors
        Never these (the problem's and the workload's together).
    runtime
        The workload's serving runtime, if it names one.
    runtime_vendor
        The vendor that runtime runs on (``vllm-cuda``: nvidia); None without a runtime.
    """

    accelerators: frozenset[str] | None = None
    vendors: frozenset[str] | None = None
    exclude_accelerators: frozenset[str] = frozenset()
    exclude_vendors: frozenset[str] = frozenset()
    runtime: str | None = None
    runtime_vendor: str | None = None

    def broken(self, accelerator_id: str, vendor: str) -> str | None:
        """The first list (of :data:`LISTS`) that leaves this accelerator out, or None."""
        allowed = self.allowed(np.array([accelerator_id], dtype=object), np.array([vendor]))
        return next((name for name, ok in allowed if not ok[0]), None)

    def allowed(
        self, accelerator_ids: np.ndarray, vendors: np.ndarray
    ) -> list[tuple[str, np.ndarray]]:
        """For each list that restricts anything, in :data:`LISTS` order: its name and
        which of the accelerators (ids and vendors, one per row) it allows."""
        ids = np.asarray(accelerator_ids, dtype=object)
        vendor = np.asarray(vendors, dtype=object)
        out: list[tuple[str, np.ndarray]] = []
        if self.runtime_vendor is not None:
            out.append(("runtime", vendor == self.runtime_vendor))
        if self.accelerators is not None:
            out.append(("accelerators", np.isin(ids, sorted(self.accelerators))))
        if self.vendors is not None:
            out.append(("vendors", np.isin(vendor, sorted(self.vendors))))
        if self.exclude_accelerators:
            out.append(("exclude_accelerators", ~np.isin(ids, sorted(self.exclude_accelerators))))
        if self.exclude_vendors:
            out.append(("exclude_vendors", ~np.isin(vendor, sorted(self.exclude_vendors))))
        return out

    def values(self, name: str) -> list[str]:
        """The values of one list, sorted (the runtime as a one-element list)."""
        value = {
            "runtime": {self.runtime} if self.runtime else set(),
            "accelerators": self.accelerators or set(),
            "vendors": self.vendors or set(),
            "exclude_accelerators": self.exclude_accelerators,
            "exclude_vendors": self.exclude_vendors,
        }[name]
        return sorted(value)


def _accelerator_ids(names: list[str], field: str, catalog: Catalog) -> list[str]:
    """Catalog ids of accelerator names (ids or aliases), refusing an unknown one."""
    ids: list[str] = []
    for i, name in enumerate(names):
        try:
            ids.append(catalog.resolve_accelerator(name))
        except ProcureError as exc:
            raise ProcureError(
                exc.message,
                field=f"{field}[{i}]",
                fix=f"{exc.fix} (`procure catalog list accelerators` shows every id)",
            ) from None
    return ids


def _vendor_names(names: list[str], field: str, known: list[str]) -> list[str]:
    """Vendor names in the catalog's spelling (lower case), refusing an unknown one."""
    out: list[str] = []
    for i, name in enumerate(names):
        vendor = name.strip().lower()
        if vendor not in known:
            hint = closest(vendor, known)
            raise ProcureError(
                f"unknown vendor {name!r}",
                field=f"{field}[{i}]",
                fix=(f"did you mean {hint[0]!r}? " if hint else "")
                + f"vendors in the catalog: {', '.join(known)}",
            )
        out.append(vendor)
    return out


def _check_left(
    rule: HardwareRule, ids: list[str], field: str, vendor_of: dict[str, str], where: str
) -> None:
    """Refuse an allow-list entry another list leaves out: it would be silently ignored."""
    for i, acc in enumerate(ids):
        broken = rule.broken(acc, vendor_of[acc])
        if broken is None:
            continue
        if broken == "runtime":
            why = (
                f"runtime {rule.runtime} runs on "
                f"{VENDOR_HARDWARE.get(str(rule.runtime_vendor), rule.runtime_vendor)} "
                "hardware only"
            )
            fix = f"remove {acc} from the list, or choose a runtime that runs on it"
        else:
            why = f"{where}{broken} {rule.values(broken)} leave it out"
            fix = f"remove {acc} from the list, or change {where}{broken}"
        raise ProcureError(
            f"{acc} ({vendor_of[acc]}) is listed, but {why}", field=f"{field}[{i}]", fix=fix
        )


def _check_vendors_left(rule: HardwareRule, vendors: list[str], field: str, where: str) -> None:
    for i, vendor in enumerate(vendors):
        if rule.runtime_vendor is not None and vendor != rule.runtime_vendor:
            raise ProcureError(
                f"vendor {vendor} is listed, but runtime {rule.runtime} runs on "
                f"{VENDOR_HARDWARE.get(rule.runtime_vendor, rule.runtime_vendor)} hardware only",
                field=f"{field}[{i}]",
                fix=f"remove {vendor} from the list, or choose a runtime that runs on it",
            )
        if rule.vendors is not None and vendor not in rule.vendors:
            raise ProcureError(
                f"vendor {vendor} is listed, but {where}vendors {sorted(rule.vendors)} leave "
                "it out",
                field=f"{field}[{i}]",
                fix=f"remove {vendor} from the list, or add it to {where}vendors",
            )
        if vendor in rule.exclude_vendors:
            raise ProcureError(
                f"vendor {vendor} is both allowed and excluded",
                field=f"{field}[{i}]",
                fix=f"remove {vendor} from one of the two lists",
            )


def _both(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None:
        return b
    return a if b is None else a & b


def hardware_rules(problem: Problem, catalog: Catalog) -> dict[str, HardwareRule]:
    """Workload name -> the hardware it may run on (see the module docstring).

    Raises
    ------
    ProcureError
        An accelerator or vendor the catalog does not know (with a did-you-mean); an
        allow-list entry that another list or the runtime leaves out; lists that leave a
        workload no accelerator of the catalog.
    """
    acc = catalog.accelerators
    vendor_of = {str(k): str(v) for k, v in acc["vendor"].items()}
    known_vendors = sorted(set(vendor_of.values()))

    def lists(
        owner: Problem | TrainingWorkload | InferenceWorkload | BatchInferenceWorkload,
        prefix: str,
    ) -> HardwareRule:
        allow = getattr(owner, "accelerators", None)
        vendors = getattr(owner, "vendors", None)
        return HardwareRule(
            accelerators=None
            if allow is None
            else frozenset(_accelerator_ids(allow, prefix + "accelerators", catalog)),
            vendors=None
            if vendors is None
            else frozenset(_vendor_names(vendors, prefix + "vendors", known_vendors)),
            exclude_accelerators=frozenset(
                _accelerator_ids(
                    owner.exclude_accelerators, prefix + "exclude_accelerators", catalog
                )
            ),
            exclude_vendors=frozenset(
                _vendor_names(owner.exclude_vendors, prefix + "exclude_vendors", known_vendors)
            ),
        )

    top = lists(problem, "")
    others = HardwareRule(
        vendors=top.vendors,
        exclude_accelerators=top.exclude_accelerators,
        exclude_vendors=top.exclude_vendors,
    )
    listed = _accelerator_ids(problem.accelerators or [], "accelerators", catalog)
    _check_left(others, listed, "accelerators", vendor_of, "")
    _check_vendors_left(
        HardwareRule(exclude_vendors=top.exclude_vendors),
        _vendor_names(problem.vendors or [], "vendors", known_vendors),
        "vendors",
        "",
    )
    rules: dict[str, HardwareRule] = {}
    for i, w in enumerate(problem.workloads):
        prefix = f"workloads[{i}] ({w.name})."
        own = lists(w, prefix)
        runtime = getattr(w, "runtime", None)
        runtime_vendor = RUNTIME_BY_VENDOR_OF.get(runtime) if runtime else None
        # the workload's allow lists, each entry within the problem's lists and its own
        if w.accelerators is not None:
            names = list(w.accelerators)
            ids = _accelerator_ids(names, prefix + "accelerators", catalog)
            _check_left(
                HardwareRule(runtime=runtime, runtime_vendor=runtime_vendor),
                ids,
                prefix + "accelerators",
                vendor_of,
                "",
            )
            _check_left(top, ids, prefix + "accelerators", vendor_of, "the problem's ")
            _check_left(
                HardwareRule(
                    vendors=own.vendors,
                    exclude_accelerators=own.exclude_accelerators,
                    exclude_vendors=own.exclude_vendors,
                ),
                ids,
                prefix + "accelerators",
                vendor_of,
                "its ",
            )
        if w.vendors is not None:
            names = _vendor_names(w.vendors, prefix + "vendors", known_vendors)
            _check_vendors_left(
                HardwareRule(runtime=runtime, runtime_vendor=runtime_vendor, vendors=top.vendors),
                names,
                prefix + "vendors",
                "the problem's ",
            )
            _check_vendors_left(
                HardwareRule(exclude_vendors=top.exclude_vendors | own.exclude_vendors),
                names,
                prefix + "vendors",
                "",
            )
        rule = HardwareRule(
            accelerators=_both(top.accelerators, own.accelerators),
            vendors=_both(top.vendors, own.vendors),
            exclude_accelerators=top.exclude_accelerators | own.exclude_accelerators,
            exclude_vendors=top.exclude_vendors | own.exclude_vendors,
            runtime=runtime,
            runtime_vendor=runtime_vendor,
        )
        left = [a for a, v in vendor_of.items() if rule.broken(a, v) is None]
        if not left:
            field = prefix + ("runtime" if runtime else "accelerators")
            said = [f"{name} {rule.values(name)}" for name in LISTS[1:] if rule.values(name)]
            if runtime_vendor is not None:
                hardware = VENDOR_HARDWARE.get(runtime_vendor, runtime_vendor)
                said.insert(0, f"runtime {runtime} runs on {hardware} hardware only")
            raise ProcureError(
                f"workload {w.name!r} may run on no accelerator of the catalog: " + "; ".join(said),
                field=field.removesuffix("."),
                fix="allow an accelerator (or vendor) that the runtime runs on and no list "
                "excludes",
            )
        rules[w.name] = rule
    return rules
