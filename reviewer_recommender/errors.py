"""Domain errors: what a use case refuses, in words, with a stable machine-readable code.

Services and storage raise these; each face maps them to its own syntax (the HTTP API to a
status and a JSON body ``{"detail", "code", ...extra}``, see :mod:`api.errors`; the CLI to an
exit code and a message). Nothing below the faces raises an HTTP error.

- :class:`NotFound`: a venue, paper, reviewer, run, job or token does not exist (HTTP 404).
- :class:`StateConflict`: the request is well formed but the stored state does not allow it
  now (a stale version, no affinities yet, not a draft, bidding closed; HTTP 409).
- :class:`InvalidRequest`: the request's content cannot be acted on (HTTP 422).
- :class:`BadRequest`: the request is malformed in a way no field names (HTTP 400).
- :class:`Forbidden`: the caller may not do this (HTTP 403).
- :class:`Unauthenticated`: the caller is not known (HTTP 401).
- :class:`TooLarge`: the request is larger than the service accepts (HTTP 413).
- :class:`TooMany`: the caller already has as much going on as the service allows (a
  venue's queue of jobs is full); ``retry_after`` in seconds, when given, says when to try
  again (HTTP 429 with ``Retry-After``).
"""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    """A refusal: ``code`` for programs (stable), ``detail`` for people (a sentence or a
    structured object), ``extra`` fields for the caller (e.g. ``force_allowed``)."""

    default_code: ClassVar[str] = "error"

    def __init__(self, code: str | None, detail: Any, **extra: Any):
        self.code = code or self.default_code
        self.detail = detail
        self.extra = extra
        super().__init__(detail if isinstance(detail, str) else repr(detail))


class NotFound(DomainError):
    default_code = "not_found"


class StateConflict(DomainError):
    default_code = "conflict"


class InvalidRequest(DomainError):
    default_code = "validation_error"


class BadRequest(DomainError):
    default_code = "bad_request"


class Forbidden(DomainError):
    default_code = "forbidden"


class Unauthenticated(DomainError):
    default_code = "unauthorized"


class TooLarge(DomainError):
    default_code = "payload_too_large"


class TooMany(DomainError):
    default_code = "too_many_requests"


def not_found(what: str, identifier: object) -> NotFound:
    """``what identifier not found`` (e.g. ``paper 'p1' not found``)."""
    return NotFound("not_found", f"{what} {identifier!r} not found")
