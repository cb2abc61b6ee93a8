"""What runs and jobs say about themselves in words: their parameters in one line, their
lineage, their log as structured entries, and why a failed job failed (a stable code).

Pure functions over stored values (no database): the response schemas compute their
derived fields with them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

STALE_PREFIX = "stale affinities: "


def stale_message(venue_id: str, run_id: int, papers: Sequence[str]) -> str:
    """Why a solve cannot place ``papers`` (no scores in the run), and the remedy."""
    shown = ", ".join(papers[:10]) + (f" and {len(papers) - 10} more" if len(papers) > 10 else "")
    return (
        f"{STALE_PREFIX}{len(papers)} paper{'s' if len(papers) != 1 else ''} needing "
        f"reviewers {'have' if len(papers) != 1 else 'has'} no scores in affinity run "
        f"{run_id} (uploaded after it was computed: {shown}); recompute affinity "
        f"(POST /venues/{venue_id}/affinity/jobs), then solve again"
    )


_STAMP = re.compile(
    r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?) (.*)$", re.S
)
_LITERAL = re.compile(r"\{.*\}", re.S)


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return "(" + _pairs(value) + ")"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def _pairs(mapping: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{key} {_value(value)}" for key, value in mapping.items() if value is not None
    )


def readable(message: str) -> str:
    """``message`` with a Python dict literal in it (what older job logs printed, e.g. an
    affinity config) written as ``key value, ...``."""
    found = _LITERAL.search(message)
    if found is None:
        return message
    try:
        value = ast.literal_eval(found.group(0))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return message
    if not isinstance(value, dict):
        return message
    return message[: found.start()] + _pairs(value) + message[found.end() :]


def log_entries(lines: list[str], *, error: str = "") -> list[dict[str, Any]]:
    """A job's log lines (``<ISO time> <message>``) as ``{time, level, message}`` entries.
    Level: ``warning`` for ``warning: ...`` lines and interruptions, ``error`` for the
    failure itself, the causes of an infeasible problem and internal errors, else ``info``."""
    entries = []
    for line in lines:
        match = _STAMP.match(str(line))
        time, message = (match.group(1), match.group(2)) if match else (None, str(line))
        level = "info"
        if message.startswith("warning: "):
            level, message = "warning", message.removeprefix("warning: ")
        elif message.startswith(("interrupted", "cancelled")):
            level = "warning"
        elif (error and message == error) or message.startswith(("internal error", "cause: ")):
            level = "error"
            message = message.removeprefix("cause: ")
        entries.append({"time": time, "level": level, "message": readable(message)})
    return entries


def error_code(state: str, error: str) -> str | None:
    """Why a job ended without a result, as a stable code (None when it did not fail)."""
    if state in ("cancelled", "interrupted"):
        return state
    if state != "failed":
        return None
    text = error or ""
    for prefix, code in (
        (STALE_PREFIX, "stale_affinities"),
        ("infeasible", "infeasible"),
        ("no feasible assignment found", "no_assignment"),
        ("internal error", "internal_error"),
        ("cannot build", "invalid_input"),
        ("cannot read", "invalid_input"),
        ("bad ", "invalid_input"),
    ):
        if text.startswith(prefix) or prefix in text[:80]:
            return code
    return "failed"


def solve_summary(parameters: Mapping[str, Any]) -> str:
    """A solve's options in one line, e.g. ``3 per paper, loads 0-6, solver auto``."""
    if not parameters:
        return ""
    words = [
        f"{parameters.get('reviewers_per_paper', 3)} per paper",
        f"loads {parameters.get('min_load', 0)}-{parameters.get('max_load', 6)}",
        f"solver {parameters.get('solver', 'auto')}",
    ]
    if parameters.get("demand"):
        words.append(f"{len(parameters['demand'])} paper demands")
    if parameters.get("custom_max_load"):
        words.append(f"{len(parameters['custom_max_load'])} reviewer max loads")
    if parameters.get("min_score") is not None:
        words.append(f"min score {parameters['min_score']:g}")
    if parameters.get("max_per_affiliation") is not None:
        key = str(parameters.get("institution_key", "affiliation")).replace("_", " ")
        words.append(f"at most {parameters['max_per_affiliation']} per {key}")
    if parameters.get("fairness_keep") is not None:
        words.append(f"fairness keeping {parameters['fairness_keep']:g}")
    if parameters.get("require_attribute"):
        required = parameters["require_attribute"]
        words.append(
            f"requires {required.get('min_count', 1)} x {required.get('name')}="
            f"{required.get('value')}"
        )
    if parameters.get("perturbation") is not None:
        words.append(f"perturbation beta {parameters['perturbation']:g}")
    if parameters.get("probability_cap") is not None:
        words.append(f"randomized, cap {parameters['probability_cap']:g}")
    if parameters.get("time_limit") is not None:
        words.append(f"time limit {parameters['time_limit']:g} s")
    if parameters.get("seed") is not None:
        words.append(f"seed {parameters['seed']}")
    return ", ".join(words)


def affinity_summary(parameters: Mapping[str, Any]) -> str:
    """An affinity job's options in one line."""
    config = dict(parameters.get("config") or {})
    words = [_pairs(config)] if config else ["default scoring"]
    if parameters.get("top_n"):
        words.append(f"top {parameters['top_n']} kept")
    return ", ".join(w for w in words if w)


def reassignment_summary(parameters: Mapping[str, Any]) -> str:
    """A re-assignment job's request in one line."""
    live = f"live run {parameters.get('live_assignment_id')}"
    if parameters.get("source") == "declines":
        return f"the open declines of {live}"
    withdraw = len(parameters.get("withdraw") or [])
    remove = len(parameters.get("remove") or [])
    return f"{live} without {withdraw} reviewer(s) and {remove} pair(s)"


def job_summary(kind: str, params: Mapping[str, Any]) -> str:
    if kind == "reassignment":
        return reassignment_summary(params)
    return solve_summary(params) if kind == "assignment" else affinity_summary(params)
