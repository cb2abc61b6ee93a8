"""records have a lifecycle: a reviewer's or submission's status

Revision ID: 0006
Revises: 0005

- ``reviewers.status`` and ``submissions.status``: ``active`` (every existing row) or
  ``withdrawn`` (kept with its history, no longer assignable).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("reviewers", "submissions")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("status", sa.String(length=20), nullable=False, server_default="active")
            )


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("status")
