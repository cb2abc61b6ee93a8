"""Alembic environment: configured in code by
:func:`reviewer_recommender.storage.db.alembic_config`."""

from alembic import context
from sqlalchemy import Engine

from reviewer_recommender.storage.models import Base

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
