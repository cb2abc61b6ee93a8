"""Failures the services report to every face, each with its own exit code / status.

- :class:`recommender.corpus.InputError`: an input file or table is wrong (file, line, field);
  CLI exit 1, API 422.
- :class:`OptionError`: an option, or a combination of options, cannot do what it says;
  CLI exit 1 naming the flag, API 422 naming the field.
- :class:`matching.Infeasible`: no assignment satisfies the hard constraints (diagnosis in a
  chair's words); CLI exit 2.
- :class:`NoAssignment`: the solver stopped (time limit) before finding any assignment;
  CLI exit 2.
"""

from __future__ import annotations

# The one option error of the project, defined where it is first raised (matching); the
# services raise it naming the field of their parameters
# (reviewer_recommender.services.params.AssignParams), which each face shows in its own
# syntax.
from matching.validate import OptionError

__all__ = ["NoAssignment", "OptionError"]


class NoAssignment(RuntimeError):
    """No assignment was found, without a proof that none exists (e.g. the time limit ran
    out first)."""
