"""Alembic environment: configured in code by :func:`api.db.alembic_config`."""

from alembic import context
from sqlalchemy import Engine

from api.models import Base

engine: Engine = context.config.attributes["engine"]
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
