"""pools of persons, person tokens, person bids, bidding switch, declines

Revision ID: 0005
Revises: 0004

- new ``pool_members`` (venue, pool, person): every existing reviewer joins ``reviewers``.
- ``affinity_runs.pool`` and ``assignments.pool`` (existing rows: ``reviewers``); the one
  live run per venue becomes one live run per venue and pool.
- ``paper_demands`` and ``reviewer_max_loads`` are kept per pool (the pool joins their
  primary key; existing rows: ``reviewers``).
- ``bids.origin`` (``chair`` for existing rows: uploads) and ``bids.updated_at``.
- ``venues.bidding_open`` (false), ``api_tokens.person_id`` (null).
- new ``declines``: a person declines an assigned paper of a live run, with a reason.
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

POOL = sa.String(30)


def _rebuild_limits(table: str, key: str, value: str, with_pool: bool) -> None:
    """Recreate ``table`` with (venue_id[, pool], key) as its primary key, keeping its rows
    (the same statements on SQLite and PostgreSQL: a primary key cannot be altered in
    place on SQLite)."""
    temporary = f"{table}_old"
    op.rename_table(table, temporary)
    columns: list[sa.Column[Any]] = [
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column(key, sa.String(length=300), nullable=False),
        sa.Column(value, sa.Integer(), nullable=False),
    ]
    primary = ["venue_id", key]
    if with_pool:
        columns.insert(1, sa.Column("pool", POOL, nullable=False, server_default="reviewers"))
        primary = ["venue_id", "pool", key]
    op.create_table(
        table,
        *columns,
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        # another name than the renamed table's primary key (PostgreSQL names its index)
        sa.PrimaryKeyConstraint(*primary, name=f"pk_{table}" if with_pool else f"{table}_pkey"),
    )
    if with_pool:
        op.execute(
            f"INSERT INTO {table} (venue_id, pool, {key}, {value}) "
            f"SELECT venue_id, 'reviewers', {key}, {value} FROM {temporary}"
        )
    else:
        op.execute(
            f"INSERT INTO {table} (venue_id, {key}, {value}) "
            f"SELECT venue_id, {key}, {value} FROM {temporary} WHERE pool = 'reviewers'"
        )
    op.drop_table(temporary)


def upgrade() -> None:
    op.create_table(
        "pool_members",
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("pool", POOL, nullable=False),
        sa.Column("person_id", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(
            ["venue_id", "person_id"],
            ["reviewers.venue_id", "reviewers.id"],
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("venue_id", "pool", "person_id"),
    )
    op.create_index("ix_pool_members_person", "pool_members", ["venue_id", "person_id"])
    op.execute(
        "INSERT INTO pool_members (venue_id, pool, person_id) "
        "SELECT venue_id, 'reviewers', id FROM reviewers"
    )

    # plain ALTER TABLE statements, never a batch copy: on SQLite a copied table is dropped,
    # and dropping venues or assignments would cascade to every row that refers to them
    op.add_column(
        "affinity_runs", sa.Column("pool", POOL, nullable=False, server_default="reviewers")
    )
    op.add_column(
        "assignments", sa.Column("pool", POOL, nullable=False, server_default="reviewers")
    )
    op.drop_index(
        "uq_assignments_one_live_per_venue",
        table_name="assignments",
        sqlite_where=sa.text("state = 'live'"),
        postgresql_where=sa.text("state = 'live'"),
    )
    op.create_index(
        "uq_assignments_one_live_per_pool",
        "assignments",
        ["venue_id", "pool"],
        unique=True,
        sqlite_where=sa.text("state = 'live'"),
        postgresql_where=sa.text("state = 'live'"),
    )

    _rebuild_limits("paper_demands", "paper_id", "demand", with_pool=True)
    _rebuild_limits("reviewer_max_loads", "reviewer_id", "max_load", with_pool=True)

    op.add_column(
        "bids", sa.Column("origin", sa.String(length=10), nullable=False, server_default="chair")
    )
    op.add_column("bids", sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "venues",
        sa.Column("bidding_open", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("api_tokens", sa.Column("person_id", sa.String(length=300), nullable=True))

    op.create_table(
        "declines",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("pool", POOL, nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=300), nullable=False),
        sa.Column("person_id", sa.String(length=300), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=False),
        sa.Column("reassignment_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "uq_declines_pair", "declines", ["assignment_id", "paper_id", "person_id"], unique=True
    )
    op.create_index("ix_declines_venue_state", "declines", ["venue_id", "state"])


def downgrade() -> None:
    op.drop_index("ix_declines_venue_state", table_name="declines")
    op.drop_index("uq_declines_pair", table_name="declines")
    op.drop_table("declines")
    op.drop_column("api_tokens", "person_id")
    op.drop_column("venues", "bidding_open")
    op.drop_column("bids", "updated_at")
    op.drop_column("bids", "origin")
    # the reviewers pool's limits are the venue's again; other pools' are dropped
    _rebuild_limits("reviewer_max_loads", "reviewer_id", "max_load", with_pool=False)
    _rebuild_limits("paper_demands", "paper_id", "demand", with_pool=False)
    # one live run per venue again: the reviewers' stays live, other pools' are superseded
    op.execute(
        "UPDATE assignments SET state = 'superseded' WHERE state = 'live' AND pool <> 'reviewers'"
    )
    op.drop_index(
        "uq_assignments_one_live_per_pool",
        table_name="assignments",
        sqlite_where=sa.text("state = 'live'"),
        postgresql_where=sa.text("state = 'live'"),
    )
    op.create_index(
        "uq_assignments_one_live_per_venue",
        "assignments",
        ["venue_id"],
        unique=True,
        sqlite_where=sa.text("state = 'live'"),
        postgresql_where=sa.text("state = 'live'"),
    )
    op.drop_column("assignments", "pool")
    op.drop_column("affinity_runs", "pool")
    op.drop_index("ix_pool_members_person", table_name="pool_members")
    op.drop_table("pool_members")
