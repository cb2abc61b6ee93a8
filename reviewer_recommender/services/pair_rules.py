"""A venue's stored pair constraints in the words of the matching layer's rules.

The venue stores what excludes a pair as conflict rows with a ``source`` (``detected``,
``uploaded``, ``bid``, ``forbid``) and a ``reason``; :func:`exclusion` maps each to the one
exclusion vocabulary (:data:`matching.violations.EXCLUSION_KINDS`), so that publishing
checks, edit previews, the edge browser and alternates all read a stored row the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

# what each conflict source is, as an exclusion of its pair
EXCLUSION_OF_SOURCE = {
    "detected": "conflict",
    "uploaded": "conflict",
    "bid": "bid",
    "forbid": "forbid",
}


def exclusion(source: str, reason: str | None) -> tuple[str, str]:
    """``(kind, reason)`` of a stored conflict row: a conflict of interest keeps its source
    in the reason (``detected: co-author ...``), a bid its label, a forbid the chair's
    reason."""
    kind = EXCLUSION_OF_SOURCE.get(source, "conflict")
    if kind == "conflict":
        return kind, f"{source}: {reason}" if reason else source
    if kind == "bid":
        return kind, (reason or "").removeprefix("bid ")
    return kind, reason or ""


def exclusions_frame(rows: Iterable[tuple[Any, Any, str, str | None]]) -> pd.DataFrame:
    """Stored ``(paper_id, reviewer_id, source, reason)`` rows as the exclusions table of
    :func:`matching.check_assignment` (``paper_id, reviewer_id, kind, reason``)."""
    records = [(str(p), str(r), *exclusion(source, reason)) for p, r, source, reason in rows]
    return pd.DataFrame(records, columns=["paper_id", "reviewer_id", "kind", "reason"])
