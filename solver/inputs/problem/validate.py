"""Reading a problem file: YAML to a validated :class:`Problem`, every mistake one
:class:`~solver.errors.ProcureError` naming the file, the field path (workloads by name)
and the fix."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, ValidationError

from solver.errors import ProcureError, closest
from solver.inputs.problem.fields import FIX_SEPARATOR, MAX_MAGNITUDE
from solver.inputs.problem.schema import Problem
from solver.inputs.yamlio import load_yaml, read_text_file


def _field_path(loc: tuple[object, ...], data: object) -> str:
    """Turn a pydantic location into ``workloads[1].tokens``, naming workloads by name."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and item < len(node) and isinstance(node[item], dict):
                wname = node[item].get("name")
                if wname:
                    label = f"[{item}] ({wname})"
            parts.append(label)
            node = node[item] if isinstance(node, list) and item < len(node) else None
        else:
            key = str(item)
            if key in {"training", "inference", "batch_inference"} and isinstance(node, dict):
                continue  # discriminator tag, not a field
            if key.startswith("function-") or key in {"str", "ModelShape", "site_id", "site"}:
                continue  # a union's branch, not a field
            node = node.get(item) if isinstance(node, dict) else None
            parts.append(("." if parts else "") + _shown_key(key))
    return "".join(parts) or "(top level)"


_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _shown_key(key: str) -> str:
    """A key as it may be echoed: field names are, anything else (a line of some other
    file read as YAML, a secret) is not."""
    return key if _NAME_RE.match(key) else "<unrecognised key>"


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models a field's type holds (through lists, unions, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        found += [m for m in _models_in(arg) if m not in found]
    return found


def _models_at(loc: tuple[object, ...]) -> list[type[BaseModel]]:
    """The models a key at ``loc`` (its last item) may belong to: a workload's kind tag
    picks its class; an unknown path gives none."""
    models: list[type[BaseModel]] = [Problem]
    for item in loc[:-1]:
        if isinstance(item, int):
            continue
        if isinstance(item, str) and item.startswith("function-") and item.endswith("]"):
            # a model with an "after" validator: "function-after[_check(), ModelShape]"
            item = item[:-1].rpartition(", ")[2]
        by_tag = [m for m in models if item in _kind_tags(m)]
        if by_tag:
            models = by_tag
            continue
        inner: list[type[BaseModel]] = []
        for model in models:
            info = model.model_fields.get(str(item))
            if info is not None:
                inner += [m for m in _models_in(info.annotation) if m not in inner]
        if inner:
            models = inner
        elif str(item) not in {"str", "site_id", "site", "ModelShape"} and not str(item).startswith(
            "function-"
        ):  # a model's after-validator wraps it: not a field
            return []
    return models


def _kind_tags(model: type[BaseModel]) -> tuple[object, ...]:
    """The values of a model's ``kind`` tag (a workload's class), or none."""
    info = model.model_fields.get("kind")
    return get_args(info.annotation) if info is not None else ()


def _fix_for(error: dict) -> str:
    kind = error.get("type", "")
    loc = error.get("loc", ())
    named = [item for item in loc if not isinstance(item, int)]  # a list's field, not its index
    field = _shown_key(str(named[-1])) if named else ""
    if kind == "extra_forbidden":
        # a near name among the fields of the object the key is in, never the key itself
        # (a key of another object would send the user round in a loop)
        model_fields: set[str] = set()
        for cls in _models_at(tuple(loc)):
            model_fields |= set(cls.model_fields)
        hint = closest(field, model_fields - {field})
        return f"remove {field!r}" + (f" or rename it to {hint[0]!r}" if hint else "")
    if kind == "too_short" and field in ("periods", "modes", "workloads"):
        what = {
            "periods": "periods (or remove the key to mean all)",
            "modes": "modes (on_demand, spot, reserved_1y, reserved_3y, owned)",
            "workloads": "workloads",
        }
        return f"list at least one of the {what[field]}"
    if kind == "too_short" and field in ("accelerators", "vendors"):
        return f"list at least one of the {field}, or remove the key to allow every one"
    if field == "site_id":  # a sites: entry that is neither an id nor a mapping
        return (
            "write a catalog site's id (procure catalog list sites) or describe your own site "
            "as a mapping: {name: our-dc, region: aws/us-east-1, pue: 1.5}"
        )
    if kind == "string_pattern_mismatch" and field == "name":
        return "use letters, digits, '.', '_' or '-' only, no spaces (e.g. our-dc)"
    if field == "training_margin" and kind == "value_error":
        return "write training_margin: low (the default), point, or a number such as 0.9"
    if kind == "missing":
        return f"add the required field {field!r}"
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        return "set kind to one of: training, inference, batch_inference"
    if kind == "literal_error":
        return f"write one of the values the message lists for {field!r}"
    if kind in {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}:
        if field in _FRACTION_FIXES:
            return _FRACTION_FIXES[field]
        return f"give {field!r} a value within the limit stated above"
    if "type" in kind or kind.endswith("_parsing"):
        return f"give {field!r} a value of the right type"
    return "correct the value as the message says"


#: fields that are fractions, where a percentage (99 for p99) is the likely slip
_FRACTION_FIXES = {
    "slo_percentile": "write the percentile as a fraction from 0.5 up to (not including) 1: "
    "0.9 for p90, 0.99 for p99",
    "capacity_confidence": "write the confidence as a fraction from 0.5 up to (not including) "
    "1: 0.9 for 90%",
}


def _first_huge_number(node: object, loc: tuple = ()) -> tuple[tuple, int | float] | None:
    """The location and value of the first finite number larger than MAX_MAGNITUDE."""
    if isinstance(node, bool):
        return None
    if isinstance(node, int | float):
        if abs(node) > MAX_MAGNITUDE and (isinstance(node, int) or math.isfinite(node)):
            return loc, node
        return None
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        found = _first_huge_number(child, (*loc, key))
        if found is not None:
            return found
    return None


def _without_string_branch(errors: list, data: object) -> list:
    """Errors less the "not a string" of a ``str | Shape`` field given a mapping: for
    ``model: {params_b: 47, experts: 8}`` the mistake is in the shape, not that it is no
    preset name."""

    def given(loc: tuple) -> object:
        node = data
        for key in loc:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            elif isinstance(node, dict):
                continue  # a union's tag (training, ModelShape) is not in the data
            else:
                return None
        return node

    kept = [
        e
        for e in errors
        if not (e["type"] == "string_type" and e["loc"][-1:] == ("str",))
        or not isinstance(given(e["loc"][:-1]), dict)
    ]
    return kept or errors


def parse_problem(data: object, *, file: str = "<problem>") -> Problem:
    """Validate already-parsed YAML data into a :class:`Problem`.

    Raises
    ------
    ProcureError
        On the first validation error, naming the field path and the fix.
    """
    if data is None:
        raise ProcureError(
            "the problem file is empty",
            file=file,
            fix="start from an example in problems/ (procure schema prints every field)",
        )
    if not isinstance(data, dict):
        raise ProcureError(
            "the file does not hold a mapping of fields",
            file=file,
            fix="start the file with fields such as 'name:', 'horizon_months:', 'workloads:'",
        )
    huge = _first_huge_number(data)
    if huge is not None:
        loc, value = huge
        raise ProcureError(
            f"{str(value)[:24]}{'...' if len(str(value)) > 24 else ''} is beyond any plausible "
            f"value (more than {MAX_MAGNITUDE:g})",
            file=file,
            field=_field_path(loc, data),
            fix="check the number for a typo (units: USD, tokens, months, as the schema says)",
        )
    try:
        return Problem.model_validate(data)
    except ValidationError as exc:
        errors = _without_string_branch(exc.errors(), data)
        # an unknown field is most often a typo of a missing one: report it first
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        msg = str(first.get("msg", "invalid value"))
        msg = msg.removeprefix("Value error, ")
        msg, _, fix = msg.partition(FIX_SEPARATOR)
        more = f" ({len(errors) - 1} more error(s) after fixing this)" if len(errors) > 1 else ""
        raise ProcureError(
            msg + more,
            file=file,
            field=_field_path(first["loc"], data),
            fix=fix or _fix_for(first),
        ) from None


def load_problem(path: str | Path) -> Problem:
    """Read and validate a problem YAML file.

    Raises
    ------
    ProcureError
        File missing, YAML syntax error (with its line), or a validation error.
    """
    path = Path(path)
    fix = "check the path; examples are in problems/"
    text = read_text_file(path, what="problem file", fix=fix)
    data = load_yaml(text, file=str(path))
    return parse_problem(data, file=str(path))
