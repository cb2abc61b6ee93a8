"""job ownership: which server holds a job, and its heartbeat

Revision ID: 0004
Revises: 0003

- ``jobs``: ``owner`` (the server instance running or queueing the job) and
  ``heartbeat_at`` (when that server last said it still runs). Existing rows have neither:
  a server starting up treats an unfinished job without an owner as left by a dead server.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("heartbeat_at")
        batch_op.drop_column("owner")
