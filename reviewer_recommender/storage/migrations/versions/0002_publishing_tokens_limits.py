"""publishing states and versions, token prefixes/expiry/revocation, stored demand and loads

Revision ID: 0002
Revises: 0001

- ``assignments``: ``version`` (every edit bumps it; publishing names it), ``deployed_by``,
  ``superseded_at``; the state ``deployed`` is renamed ``live`` and a partial unique index
  keeps at most one live assignment per venue.
- ``api_tokens``: ``prefix`` (non-secret start of the secret, ``""`` for older tokens),
  ``created_by``, ``expires_at``, ``revoked_at``, ``revoked_by``.
- new ``paper_demands`` and ``reviewer_max_loads``: per-paper demand and per-reviewer max
  load stored as venue resources.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE_ONLY = sa.text("state = 'live'")


def upgrade() -> None:
    op.create_table(
        "paper_demands",
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("paper_id", sa.String(length=300), nullable=False),
        sa.Column("demand", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("venue_id", "paper_id"),
    )
    op.create_table(
        "reviewer_max_loads",
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("reviewer_id", sa.String(length=300), nullable=False),
        sa.Column("max_load", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("venue_id", "reviewer_id"),
    )
    # existing rows get the server defaults, which are then dropped (the models set values)
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("prefix", sa.String(length=16), nullable=False, server_default="")
        )
        batch_op.add_column(
            sa.Column("created_by", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column("revoked_by", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.create_index(batch_op.f("ix_api_tokens_prefix"), ["prefix"], unique=False)
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        for column in ("prefix", "created_by", "revoked_by"):
            batch_op.alter_column(column, server_default=None)

    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
        batch_op.add_column(
            sa.Column("deployed_by", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.add_column(sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE assignments SET state = 'live' WHERE state = 'deployed'")
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        for column in ("version", "deployed_by"):
            batch_op.alter_column(column, server_default=None)
        batch_op.create_index(
            "uq_assignments_one_live_per_venue",
            ["venue_id"],
            unique=True,
            sqlite_where=LIVE_ONLY,
            postgresql_where=LIVE_ONLY,
        )


def downgrade() -> None:
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_assignments_one_live_per_venue",
            sqlite_where=LIVE_ONLY,
            postgresql_where=LIVE_ONLY,
        )
        batch_op.drop_column("superseded_at")
        batch_op.drop_column("deployed_by")
        batch_op.drop_column("version")
    op.execute("UPDATE assignments SET state = 'deployed' WHERE state = 'live'")

    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_tokens_prefix"))
        batch_op.drop_column("revoked_by")
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("created_by")
        batch_op.drop_column("prefix")

    op.drop_table("reviewer_max_loads")
    op.drop_table("paper_demands")
