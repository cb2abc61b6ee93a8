"""draft rules (pins, forbids, max loads of one run only); managed conflicts

Revision ID: 0007
Revises: 0006

- ``draft_rules``: a draft's own pins and forbids (its edits) and reviewer max loads (a
  re-assignment's withdrawals), kept with the run until a chair promotes them to venue
  rules. Existing venue pins, forbids and max loads stay venue rules.
- ``conflict_policies``: how a venue detects conflicts (no row: the defaults).
- ``conflict_dismissals``: conflicts a chair dismissed, with the reason, until restored.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "draft_rules",
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("paper_id", sa.String(length=300), nullable=False),
        sa.Column("reviewer_id", sa.String(length=300), nullable=False),
        sa.Column("value", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("assignment_id", "kind", "paper_id", "reviewer_id"),
    )
    op.create_table(
        "conflict_policies",
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("policy", sa.JSON(), nullable=False),
        sa.Column("updated_by", sa.String(length=200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("venue_id"),
    )
    op.create_table(
        "conflict_dismissals",
        sa.Column("venue_id", sa.String(length=100), nullable=False),
        sa.Column("paper_id", sa.String(length=300), nullable=False),
        sa.Column("reviewer_id", sa.String(length=300), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("conflict_reason", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("dismissed_by", sa.String(length=200), nullable=False),
        sa.Column("dismissed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["venue_id"], ["venues.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("venue_id", "paper_id", "reviewer_id", "source"),
    )


def downgrade() -> None:
    op.drop_table("conflict_dismissals")
    op.drop_table("conflict_policies")
    op.drop_table("draft_rules")
