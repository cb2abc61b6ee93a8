"""Per-paper demand and per-reviewer max loads: stored venue resources and how a solve,
an edit and a publication read them.

A paper's demand is, first found: its row in the venue's stored demands, its entry in the
solve's ``demand`` map, the solve's ``reviewers_per_paper``. A reviewer's max load likewise:
stored max loads, the solve's ``custom_max_load``, its ``max_load``; the min load is
``min(min_load, max load)``. Stored rows win over a solve's maps (the same order as the
service layer's files over parameters), and a solve whose map contradicts a stored row is
refused rather than silently overridden.

Every solve reads the stored rows when it runs; an edit or a publication checks a run
against the rows stored *now*, so lowering a reviewer's load after a solve is caught before
that run goes live.

The stored rows are kept per pool (:mod:`reviewer_recommender.services.pools`): a paper needs
three reviewers and one area chair; a person's max load as a reviewer is not their max load
as an area chair. A call that names no pool means the reviewers'; a solve's parameters name
theirs (``pool``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from recommender.corpus import InputError, Problem
from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.services.pools import check_pool, in_pool, not_in_pool
from reviewer_recommender.storage.models import (
    DEFAULT_POOL,
    PaperDemand,
    ReviewerMaxLoad,
    SubmissionRow,
)
from reviewer_recommender.storage.repository import (
    Paged,
    audit,
    named_page,
    not_found,
    require_paper,
    require_reviewer,
)
from reviewer_recommender.storage.search_keys import display_name


def stored_demands(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> dict[str, int]:
    return {
        str(p): int(d)
        for p, d in session.execute(
            select(PaperDemand.paper_id, PaperDemand.demand).where(
                PaperDemand.venue_id == venue_id, PaperDemand.pool == pool
            )
        )
    }


def stored_max_loads(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> dict[str, int]:
    return {
        str(r): int(m)
        for r, m in session.execute(
            select(ReviewerMaxLoad.reviewer_id, ReviewerMaxLoad.max_load).where(
                ReviewerMaxLoad.venue_id == venue_id, ReviewerMaxLoad.pool == pool
            )
        )
    }


def parameters_pool(parameters: Mapping[str, Any]) -> str:
    """The pool a solve's parameters name (the reviewers' when they name none)."""
    return str(parameters.get("pool") or DEFAULT_POOL)


@dataclass(frozen=True)
class Limits:
    """The demand and loads a run is held to. ``demand``/``max_load`` hold the ids whose
    value differs from the defaults' source (stored rows and the solve's maps)."""

    reviewers_per_paper: int
    max_load_default: int
    min_load_default: int
    demand: Mapping[str, int] = field(default_factory=dict)
    max_load: Mapping[str, int] = field(default_factory=dict)
    stored_demands: int = 0
    stored_max_loads: int = 0
    # the run's own max loads (a re-assignment's withdrawals), already in ``max_load``
    draft_max_load: Mapping[str, int] = field(default_factory=dict)

    def demand_of(self, paper_id: str) -> int:
        return int(self.demand.get(paper_id, self.reviewers_per_paper))

    def max_of(self, reviewer_id: str) -> int:
        return int(self.max_load.get(reviewer_id, self.max_load_default))

    def min_of(self, reviewer_id: str) -> int:
        return min(self.min_load_default, self.max_of(reviewer_id))

    def demand_array(self, paper_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        return _per_id(paper_ids, self.demand, self.reviewers_per_paper)

    def max_array(self, reviewer_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        return _per_id(reviewer_ids, self.max_load, self.max_load_default)

    def min_array(self, reviewer_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        return np.minimum(self.min_load_default, self.max_array(reviewer_ids))

    def describe(self) -> dict[str, Any]:
        """What a run records of the limits it was solved under."""
        return {
            "reviewers_per_paper": self.reviewers_per_paper,
            "max_load": self.max_load_default,
            "min_load": self.min_load_default,
            "demand": dict(self.demand),
            "custom_max_load": dict(self.max_load),
            "stored_demands": self.stored_demands,
            "stored_max_loads": self.stored_max_loads,
        }


def _per_id(ids: Sequence[str], values: Mapping[str, int], default: int) -> npt.NDArray[np.int64]:
    series = pd.Series(default, index=pd.Index(list(ids), dtype=object), dtype=np.int64)
    if values:
        known = series.index.intersection(list(values))
        series[known] = [int(values[i]) for i in known]
    return series.to_numpy(dtype=np.int64)


@dataclass(frozen=True)
class StoredLimits:
    """The venue's stored per-paper demands and per-reviewer max loads, read once."""

    demands: Mapping[str, int]
    max_loads: Mapping[str, int]

    def demand_rows(self) -> pd.DataFrame:
        """``paper_id, demand`` rows (the service layer's demand rows, like a ``--demand``
        file's)."""
        return pd.DataFrame(list(self.demands.items()), columns=["paper_id", "demand"]).astype(
            {"demand": "int64"}
        )

    def max_load_rows(self) -> pd.DataFrame:
        """``reviewer_id, max`` rows (the service layer's load rows, like a
        ``--custom-max-papers`` file's)."""
        return pd.DataFrame(list(self.max_loads.items()), columns=["reviewer_id", "max"]).astype(
            {"max": "int64"}
        )


def read_stored_limits(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> StoredLimits:
    """The pool's stored demands and max loads, with the venue's withdrawn records over
    them (:mod:`reviewer_recommender.services.records`): a withdrawn paper needs nobody
    (demand 0; for the senior area chairs, whose items are area chairs, a withdrawn area
    chair), a withdrawn person takes nothing (max load 0)."""
    from reviewer_recommender.services.records import withdrawn_ids

    persons = withdrawn_ids(session, venue_id, "reviewers", pool)
    items = (
        withdrawn_ids(session, venue_id, "reviewers", "area_chairs")
        if pool == "senior_area_chairs"
        else withdrawn_ids(session, venue_id, "papers")
    )
    return StoredLimits(
        {**stored_demands(session, venue_id, pool), **dict.fromkeys(items, 0)},
        {**stored_max_loads(session, venue_id, pool), **dict.fromkeys(persons, 0)},
    )


def demands_frame(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> pd.DataFrame:
    """The stored demands as ``paper_id, demand`` rows (the service layer's demand rows)."""
    return read_stored_limits(session, venue_id, pool).demand_rows()


def max_loads_frame(session: Session, venue_id: str, pool: str = DEFAULT_POOL) -> pd.DataFrame:
    """The stored max loads as ``reviewer_id, max`` rows (the service layer's load rows)."""
    return read_stored_limits(session, venue_id, pool).max_load_rows()


def _default(parameters: Mapping[str, Any], name: str) -> int:
    from reviewer_recommender.services.params import AssignmentIn

    value = parameters.get(name)
    return int(AssignmentIn.model_fields[name].default if value is None else value)


def resolve_limits(
    session: Session,
    venue_id: str,
    parameters: Mapping[str, Any],
    stored: StoredLimits | None = None,
) -> Limits:
    """The limits of a solve with ``parameters`` (an AssignmentIn dump; absent fields take
    its defaults), under the stored demand and max loads of its pool as they are now (or as
    ``stored`` read them). The same precedence as
    :func:`reviewer_recommender.services.problem.build_problem`
    given the stored rows as its ``demand``/``max_loads`` rows: rows over maps over
    defaults."""
    if stored is None:
        stored = read_stored_limits(session, venue_id, parameters_pool(parameters))
    demands = dict(stored.demands)
    max_loads = dict(stored.max_loads)
    inline_demand = {str(k): int(v) for k, v in (parameters.get("demand") or {}).items()}
    inline_max = {str(k): int(v) for k, v in (parameters.get("custom_max_load") or {}).items()}
    return Limits(
        reviewers_per_paper=_default(parameters, "reviewers_per_paper"),
        max_load_default=_default(parameters, "max_load"),
        min_load_default=_default(parameters, "min_load"),
        demand={**inline_demand, **demands},
        max_load={**inline_max, **max_loads},
        stored_demands=len(demands),
        stored_max_loads=len(max_loads),
    )


def contradictions(session: Session, venue_id: str, parameters: Mapping[str, Any]) -> list[str]:
    """Entries of a solve's ``demand``/``custom_max_load`` maps that a stored row overrides
    with another value (the solve would silently not do what it asks)."""
    found = []
    pool = parameters_pool(parameters)
    for key, stored, what, resource in (
        ("demand", stored_demands(session, venue_id, pool), "demand", "paper-demands"),
        (
            "custom_max_load",
            stored_max_loads(session, venue_id, pool),
            "max load",
            "reviewer-max-loads",
        ),
    ):
        for item, value in (parameters.get(key) or {}).items():
            if item in stored and stored[item] != int(value):
                found.append(
                    f"{key}[{item!r}] = {value}, but the venue stores {what} {stored[item]} "
                    f"for {item!r} (stored values win: change /{resource} or drop the entry)"
                )
    return found


def unknown_ids(session: Session, venue_id: str, parameters: Mapping[str, Any]) -> list[str]:
    """Ids of a solve's ``demand``/``custom_max_load`` maps the venue (its pool) does not
    have."""
    found = []
    pool = parameters_pool(parameters)
    papers = set(parameters.get("demand") or {})
    if papers and pool == "senior_area_chairs":
        # the senior area chairs' items are area chairs
        found += [
            f"demand: area chair {p!r} not found"
            for p in not_in_pool(session, venue_id, "area_chairs", papers)
        ]
    elif papers:
        known = set(
            session.scalars(
                select(SubmissionRow.id).where(
                    SubmissionRow.venue_id == venue_id, SubmissionRow.id.in_(sorted(papers))
                )
            )
        )
        found += [f"demand: paper {p!r} not found" for p in sorted(papers - known)]
    reviewers = set(parameters.get("custom_max_load") or {})
    if reviewers:
        found += [
            f"custom_max_load: reviewer {r!r} not found in pool {pool}"
            for r in not_in_pool(session, venue_id, pool, reviewers)
        ]
    return found


def _unknown(
    session: Session, venue_id: str, ids: Sequence[str], model: Any, what: str, source: str
) -> list[Problem]:
    known = set(session.scalars(select(model.id).where(model.venue_id == venue_id)))
    return [
        Problem(source, None, f"{what}_id", f"unknown {what} id {i!r}")
        for i in sorted(set(ids) - known)
    ]


def _not_members(
    session: Session, venue_id: str, pool: str, ids: Sequence[str], source: str
) -> list[Problem]:
    return [
        Problem(source, None, "reviewer_id", f"unknown reviewer id {i!r} in pool {pool}")
        for i in not_in_pool(session, venue_id, pool, ids)
    ]


def check_demand_pool(pool: str) -> str:
    """``pool`` if papers can store a demand of it: 422 for the senior area chairs, whose
    solve gives every area chair ``reviewers_per_paper`` of them."""
    check_pool(pool)
    if pool == "senior_area_chairs":
        raise InvalidRequest(
            "invalid_option",
            "papers store no demand of senior area chairs: their solve gives each area chair "
            "reviewers_per_paper senior area chairs (or its entry in demand)",
            field="pool",
        )
    return pool


def replace_demands(
    session: Session, venue_id: str, frame: pd.DataFrame, source: str, pool: str = DEFAULT_POOL
) -> int:
    """Replace the pool's stored demands with ``frame`` (``paper_id, demand``), in the
    caller's transaction; InputError naming every unknown paper (nothing changed then)."""
    check_demand_pool(pool)
    problems = _unknown(session, venue_id, list(frame["paper_id"]), SubmissionRow, "paper", source)
    if problems:
        raise InputError(problems)
    session.execute(
        delete(PaperDemand).where(PaperDemand.venue_id == venue_id, PaperDemand.pool == pool)
    )
    rows = [
        {"venue_id": venue_id, "pool": pool, "paper_id": str(p), "demand": int(d)}
        for p, d in zip(frame["paper_id"], frame["demand"], strict=True)
    ]
    if rows:
        session.execute(insert(PaperDemand), rows)
    return len(rows)


def replace_max_loads(
    session: Session, venue_id: str, frame: pd.DataFrame, source: str, pool: str = DEFAULT_POOL
) -> int:
    """Replace the pool's stored max loads with ``frame`` (``reviewer_id, max``);
    InputError naming every id that is not a person of the pool."""
    check_pool(pool)
    problems = _not_members(session, venue_id, pool, list(frame["reviewer_id"]), source)
    if problems:
        raise InputError(problems)
    session.execute(
        delete(ReviewerMaxLoad).where(
            ReviewerMaxLoad.venue_id == venue_id, ReviewerMaxLoad.pool == pool
        )
    )
    rows = [
        {"venue_id": venue_id, "pool": pool, "reviewer_id": str(r), "max_load": int(m)}
        for r, m in zip(frame["reviewer_id"], frame["max"], strict=True)
    ]
    if rows:
        session.execute(insert(ReviewerMaxLoad), rows)
    return len(rows)


@dataclass(frozen=True)
class StoredTable:
    """One of the venue's stored limit tables: its row model, the column naming an entry,
    the prefix of its audit actions and what a 404 calls a missing entry."""

    model: type[PaperDemand] | type[ReviewerMaxLoad]
    key: str
    action: str
    entry: str


DEMANDS = StoredTable(PaperDemand, "paper_id", "paper_demands", "stored demand of paper")
MAX_LOADS = StoredTable(
    ReviewerMaxLoad, "reviewer_id", "reviewer_max_loads", "stored max load of reviewer"
)


def pool_detail(pool: str) -> dict[str, str]:
    """What an audit entry of a stored limit says of its pool (nothing for the reviewers',
    as before pools existed)."""
    return {} if pool == DEFAULT_POOL else {"pool": pool}


def delete_stored_entry(
    session: Session,
    venue_id: str,
    table: StoredTable,
    entry_id: str,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> None:
    """Remove one stored entry of ``table`` in ``pool`` (404 when there is none), audited
    and committed: that paper or reviewer takes each solve's default again."""
    check_pool(pool)
    row = session.get(table.model, (venue_id, pool, entry_id))
    if row is None:
        raise not_found(table.entry, entry_id)
    session.delete(row)
    audit(
        session,
        venue_id,
        actor,
        f"{table.action}.delete",
        **{table.key: entry_id},
        **pool_detail(pool),
    )
    session.commit()


def clear_stored_table(
    session: Session, venue_id: str, table: StoredTable, actor: str, pool: str = DEFAULT_POOL
) -> int:
    """Remove every stored entry of ``table`` in ``pool``, audited and committed; returns
    how many there were."""
    check_pool(pool)
    model = table.model
    where = (model.venue_id == venue_id, model.pool == pool)
    count = int(session.scalar(select(func.count()).where(*where)) or 0)
    session.execute(delete(model).where(*where))
    audit(session, venue_id, actor, f"{table.action}.clear", rows=count, **pool_detail(pool))
    session.commit()
    return count


# ---- the stored tables as venue resources -------------------------------------------------------


@dataclass(frozen=True)
class PaperDemandEntry:
    paper_id: str
    paper_title: str
    demand: int


@dataclass(frozen=True)
class ReviewerMaxLoadEntry:
    reviewer_id: str
    reviewer_name: str
    max_load: int


def list_demands(
    session: Session, venue_id: str, limit: int, offset: int, pool: str = DEFAULT_POOL
) -> Paged[dict[str, Any]]:
    """The pool's stored demands by paper id, with the papers' titles."""
    query = (
        select(PaperDemand)
        .where(PaperDemand.venue_id == venue_id, PaperDemand.pool == pool)
        .order_by(PaperDemand.paper_id)
    )
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda d: {"paper_id": d.paper_id, "demand": d.demand},
    )


def list_max_loads(
    session: Session, venue_id: str, limit: int, offset: int, pool: str = DEFAULT_POOL
) -> Paged[dict[str, Any]]:
    """The pool's stored max loads by reviewer id, with the reviewers' names."""
    query = (
        select(ReviewerMaxLoad)
        .where(ReviewerMaxLoad.venue_id == venue_id, ReviewerMaxLoad.pool == pool)
        .order_by(ReviewerMaxLoad.reviewer_id)
    )
    return named_page(
        session,
        venue_id,
        query,
        limit,
        offset,
        lambda m: {"reviewer_id": m.reviewer_id, "max_load": m.max_load},
    )


def set_demand(
    session: Session,
    venue_id: str,
    paper_id: str,
    demand: int,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> PaperDemandEntry:
    """Store one paper's demand of the pool's persons (audited, committed); 404 for an
    unknown paper."""
    check_demand_pool(pool)
    paper = require_paper(session, venue_id, paper_id)
    row = session.get(PaperDemand, (venue_id, pool, paper_id))
    if row is None:
        row = PaperDemand(venue_id=venue_id, pool=pool, paper_id=paper_id, demand=demand)
        session.add(row)
    else:
        row.demand = demand
    audit(
        session,
        venue_id,
        actor,
        "paper_demands.set",
        paper_id=paper_id,
        demand=demand,
        **pool_detail(pool),
    )
    session.commit()
    return PaperDemandEntry(paper_id=paper_id, paper_title=paper.title, demand=demand)


def set_max_load(
    session: Session,
    venue_id: str,
    reviewer_id: str,
    max_load: int,
    actor: str,
    pool: str = DEFAULT_POOL,
) -> ReviewerMaxLoadEntry:
    """Store one person's max load in the pool (audited, committed); 404 for an unknown
    reviewer or one not of the pool."""
    check_pool(pool)
    reviewer = require_reviewer(session, venue_id, reviewer_id)
    if not in_pool(session, venue_id, pool, reviewer_id):
        raise not_found(f"reviewer of pool {pool}", reviewer_id)
    row = session.get(ReviewerMaxLoad, (venue_id, pool, reviewer_id))
    if row is None:
        row = ReviewerMaxLoad(
            venue_id=venue_id, pool=pool, reviewer_id=reviewer_id, max_load=max_load
        )
        session.add(row)
    else:
        row.max_load = max_load
    audit(
        session,
        venue_id,
        actor,
        "reviewer_max_loads.set",
        reviewer_id=reviewer_id,
        max_load=max_load,
        **pool_detail(pool),
    )
    session.commit()
    return ReviewerMaxLoadEntry(
        reviewer_id=reviewer_id,
        reviewer_name=display_name(reviewer_id, reviewer.name),
        max_load=max_load,
    )
