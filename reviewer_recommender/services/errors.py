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


class OptionError(ValueError):
    """An option that cannot act as asked. ``option`` is the parameter's field name
    (:class:`reviewer_recommender.services.params.AssignParams`); each face shows it in its own
    syntax."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")


class NoAssignment(RuntimeError):
    """No assignment was found, without a proof that none exists (e.g. the time limit ran
    out first)."""
