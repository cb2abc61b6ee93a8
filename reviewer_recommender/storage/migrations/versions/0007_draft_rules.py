"""draft rules: pins, forbids and max loads that hold in one run only

Revision ID: 0007
Revises: 0005

- ``draft_rules``: a draft's own pins and forbids (its edits) and reviewer max loads (a
  re-assignment's withdrawals), kept with the run until a chair promotes them to venue
  rules. Existing venue pins, forbids and max loads stay venue rules.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0005"
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


def downgrade() -> None:
    op.drop_table("draft_rules")
