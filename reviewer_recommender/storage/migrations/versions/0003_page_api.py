"""search keys, run and job numbers, run names, notes and lineage, edit history

Revision ID: 0003
Revises: 0002

- ``reviewers``/``submissions``: ``id_key`` and ``text_key`` (folded id and display name or
  title: type-ahead search), back-filled, with an id-prefix index and a covering key index
  (PostgreSQL: ``text_pattern_ops``).
- ``jobs``: ``number`` (1, 2, ... per venue, back-filled in id order), unique per venue.
- ``assignments``: ``number`` (likewise), ``name``, ``note``, ``derived_from`` (lineage).
- new ``assignment_edits``: every change of a draft with what undo needs.
"""

import re
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# frozen copies of api.search_keys (a migration must not change when the code does)
KEY_MAX_LENGTH = 200
_PROFILE_ID = re.compile(r"^~?((?:[^\W\d_]|['.\-])+(?:_(?:[^\W\d_]|['.\-])+)+)\d+$")
_NOT_WORD = re.compile(r"[\W_]+")


def _fold(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _text_key(value: str) -> str:
    return _NOT_WORD.sub(" ", _fold(value)).strip()[:KEY_MAX_LENGTH]


def _id_key(value: str) -> str:
    return _text_key(value) or _fold(value).strip()[:KEY_MAX_LENGTH]


def _display_name(reviewer_id: str, name: str | None) -> str:
    given = (name or "").strip()
    if given:
        return given
    match = _PROFILE_ID.match(reviewer_id.strip())
    return match.group(1).replace("_", " ") if match else reviewer_id


def _search_indexes(table: str) -> None:
    op.create_index(
        f"ix_{table}_id_key",
        table,
        ["venue_id", "id_key"],
        unique=False,
        postgresql_ops={"id_key": "text_pattern_ops"},
    )
    op.create_index(
        f"ix_{table}_text_key",
        table,
        ["venue_id", "text_key", "id_key", "id"],
        unique=False,
        postgresql_ops={"text_key": "text_pattern_ops"},
    )


def _backfill_keys(table: str, text_column: str) -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.text(f"SELECT venue_id, id, {text_column} FROM {table}")).all()
    values = [
        {
            "venue_id": venue_id,
            "id": item_id,
            "id_key": _id_key(item_id),
            "text_key": _text_key(
                _display_name(item_id, text) if table == "reviewers" else text or ""
            ),
        }
        for venue_id, item_id, text in rows
    ]
    statement = sa.text(
        f"UPDATE {table} SET id_key = :id_key, text_key = :text_key "
        "WHERE venue_id = :venue_id AND id = :id"
    )
    for start in range(0, len(values), 1000):
        connection.execute(statement, values[start : start + 1000])


def _backfill_numbers(table: str) -> None:
    op.execute(
        f"UPDATE {table} SET number = (SELECT COUNT(*) FROM {table} AS earlier "
        f"WHERE earlier.venue_id = {table}.venue_id AND earlier.id <= {table}.id)"
    )


def upgrade() -> None:
    for table in ("reviewers", "submissions"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("id_key", sa.String(length=300), nullable=False, server_default="")
            )
            batch_op.add_column(
                sa.Column("text_key", sa.String(length=300), nullable=False, server_default="")
            )
        _backfill_keys(table, "name" if table == "reviewers" else "title")
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("id_key", server_default=None)
            batch_op.alter_column("text_key", server_default=None)
        _search_indexes(table)

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("number", sa.Integer(), nullable=True))
    _backfill_numbers("jobs")
    op.create_index("uq_jobs_venue_number", "jobs", ["venue_id", "number"], unique=True)

    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("number", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("name", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("derived_from", sa.JSON(), nullable=True))
    _backfill_numbers("assignments")
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.alter_column("name", server_default=None)
        batch_op.alter_column("note", server_default=None)
    op.create_index(
        "uq_assignments_venue_number", "assignments", ["venue_id", "number"], unique=True
    )

    op.create_table(
        "assignment_edits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("paper_id", sa.String(length=300), nullable=True),
        sa.Column("reviewer_id", sa.String(length=300), nullable=True),
        sa.Column("other_reviewer_id", sa.String(length=300), nullable=True),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version_before", sa.Integer(), nullable=False),
        sa.Column("version_after", sa.Integer(), nullable=False),
        sa.Column("objective_before", sa.Float(), nullable=True),
        sa.Column("objective_after", sa.Float(), nullable=True),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("summary_before", sa.JSON(), nullable=False),
        sa.Column("undone", sa.Boolean(), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("undone_by", sa.String(length=200), nullable=False),
        sa.Column("undo_version", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_assignment_edits_run", "assignment_edits", ["assignment_id", "seq"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ix_assignment_edits_run", table_name="assignment_edits")
    op.drop_table("assignment_edits")
    op.drop_index("uq_assignments_venue_number", table_name="assignments")
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.drop_column("derived_from")
        batch_op.drop_column("note")
        batch_op.drop_column("name")
        batch_op.drop_column("number")
    op.drop_index("uq_jobs_venue_number", table_name="jobs")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("number")
    for table in ("submissions", "reviewers"):
        op.drop_index(f"ix_{table}_text_key", table_name=table)
        op.drop_index(f"ix_{table}_id_key", table_name=table)
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("text_key")
            batch_op.drop_column("id_key")
