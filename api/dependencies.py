"""Request parameters shared by every router: the database session, pagination and the
server's scoring run options."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from sqlalchemy.orm import Session

from api.db import get_session
from recommender.affinity.options import RunOptions

SessionDep = Annotated[Session, Depends(get_session)]
Limit = Annotated[int, Query(ge=1, le=1000, description="page size")]
Offset = Annotated[int, Query(ge=0, description="rows to skip")]


def get_run_options(request: Request) -> RunOptions:
    """The server's scoring run options (models by name, cache, device, memory bounds)."""
    options: RunOptions = request.app.state.settings.run_options
    return options


RunOptionsDep = Annotated[RunOptions, Depends(get_run_options)]
