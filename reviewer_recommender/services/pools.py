"""Pools: the levels at which a venue's persons are assigned.

Every person of a venue (a reviewer record: a profile with publications) belongs to one or
more pools: ``reviewers`` (the default), ``area_chairs``, ``senior_area_chairs``. An upload
of persons names its pool (the reviewers' when it names none) and adds them to it;
affinity runs, stored demand and max loads, solves, runs and the live run are kept per
pool, and a request that names no pool means the reviewers', as before pools existed.

Person tokens speak for one person in one role: ``reviewer`` (pool ``reviewers``) or
``area_chair`` (pool ``area_chairs``) (:data:`ROLE_POOLS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, get_args

from sqlalchemy import Select, func, insert, select
from sqlalchemy.orm import Session

from reviewer_recommender.errors import InvalidRequest
from reviewer_recommender.storage.models import DEFAULT_POOL, POOLS, PoolMember, ReviewerRow
from reviewer_recommender.storage.repository import pool_members

Pool = Literal["reviewers", "area_chairs", "senior_area_chairs"]
assert get_args(Pool) == POOLS

# the role of a person token and the pool it speaks in
ROLE_POOLS: dict[str, str] = {"reviewer": "reviewers", "area_chair": "area_chairs"}
PERSON_ROLES = tuple(ROLE_POOLS)

# what each pool's persons are called in messages
POOL_WORDS = {
    "reviewers": "reviewer",
    "area_chairs": "area chair",
    "senior_area_chairs": "senior area chair",
}

__all__ = ["DEFAULT_POOL", "PERSON_ROLES", "POOLS", "ROLE_POOLS", "Pool", "check_pool"]


def check_pool(name: str) -> str:
    """``name`` if it is a pool; 422 ``unknown_pool`` naming it otherwise."""
    if name not in POOLS:
        raise InvalidRequest(
            "unknown_pool",
            f"pool {name!r} is not one of {', '.join(POOLS)}",
            field="pool",
        )
    return name


def members_query(venue_id: str, pool: str) -> Select[Any]:
    """The ids of the pool's persons, as a query (to select or to filter by): see
    :func:`reviewer_recommender.storage.repository.pool_members`."""
    return pool_members(venue_id, pool)


def pool_person_ids(session: Session, venue_id: str, pool: str) -> list[str]:
    """The pool's persons, by id."""
    return sorted(str(i) for i in session.scalars(members_query(venue_id, pool)))


def pool_size(session: Session, venue_id: str, pool: str) -> int:
    return int(
        session.scalar(select(func.count()).select_from(members_query(venue_id, pool).subquery()))
        or 0
    )


def _present(session: Session, venue_id: str, pool: str, person_ids: Sequence[str]) -> set[str]:
    wanted = sorted(set(person_ids))
    members = members_query(venue_id, pool).subquery()
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        found.update(
            str(i)
            for i in session.scalars(
                select(members.c.person_id).where(
                    members.c.person_id.in_(wanted[start : start + 500])
                )
            )
        )
    return found


def pools_of(session: Session, venue_id: str, person_ids: Sequence[str]) -> dict[str, list[str]]:
    """The pools of each of ``person_ids`` (in the order of :data:`POOLS`)."""
    found = {pool: _present(session, venue_id, pool, person_ids) for pool in POOLS}
    return {p: [pool for pool in POOLS if p in found[pool]] for p in person_ids}


def person_pools(session: Session, venue_id: str, person_id: str) -> list[str]:
    """The pools a person belongs to, in the order of :data:`POOLS`."""
    return pools_of(session, venue_id, [person_id])[person_id]


def in_pool(session: Session, venue_id: str, pool: str, person_id: str) -> bool:
    return bool(_present(session, venue_id, pool, [person_id]))


def not_in_pool(session: Session, venue_id: str, pool: str, person_ids: Iterable[str]) -> list[str]:
    """Those of ``person_ids`` that are not persons of the pool, sorted."""
    wanted = sorted(set(person_ids))
    present = _present(session, venue_id, pool, wanted)
    return [p for p in wanted if p not in present]


def add_members(session: Session, venue_id: str, pool: str, person_ids: Iterable[str]) -> int:
    """Add persons (already stored) to a pool, in the caller's transaction; returns how
    many joined it (those already in it are left as they are)."""
    wanted = sorted(set(person_ids))
    recorded = _recorded(session, venue_id, wanted)
    new = [p for p in wanted if (p, pool) not in recorded]
    if new:
        session.execute(
            insert(PoolMember), [{"venue_id": venue_id, "pool": pool, "person_id": p} for p in new]
        )
    return len(new)


def record_unpooled(session: Session, venue_id: str, person_ids: Iterable[str]) -> int:
    """Record as reviewers those of ``person_ids`` that are stored in no pool (reviewers by
    the no-pool rule), before an upload adds them to another pool and so would end that
    rule for them; in the caller's transaction."""
    wanted = sorted(set(person_ids))
    stored: set[str] = set()
    for start in range(0, len(wanted), 500):
        stored.update(
            str(i)
            for i in session.scalars(
                select(ReviewerRow.id).where(
                    ReviewerRow.venue_id == venue_id,
                    ReviewerRow.id.in_(wanted[start : start + 500]),
                )
            )
        )
    pooled = {person for person, _ in _recorded(session, venue_id, wanted)}
    unpooled = sorted(stored - pooled)
    return add_members(session, venue_id, DEFAULT_POOL, unpooled) if unpooled else 0


def _recorded(session: Session, venue_id: str, person_ids: Sequence[str]) -> set[tuple[str, str]]:
    """The stored (person, pool) memberships of these persons."""
    found: set[tuple[str, str]] = set()
    for start in range(0, len(person_ids), 500):
        found.update(
            (str(person), str(pool))
            for person, pool in session.execute(
                select(PoolMember.person_id, PoolMember.pool).where(
                    PoolMember.venue_id == venue_id,
                    PoolMember.person_id.in_(person_ids[start : start + 500]),
                )
            )
        )
    return found
