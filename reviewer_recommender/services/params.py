"""Typed parameters of the use cases, shared by every face (CLI options, API bodies, jobs).

One model per use case; a face fills it from its own syntax (argparse flags, JSON) and the
services read nothing else, so an option means the same thing everywhere and its default is
defined once, here. Bounds are the ones any face accepts; a face may narrow them (the API
bounds ``time_limit`` tighter than the CLI, since a solve holds a server worker).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Weight of a bid when folded into a score: score + W x bid, with Very High = 1 ... Very Low
# = -1 (one definition, the scoring parameters' default).
from recommender.affinity.params import DEFAULT_BID_WEIGHT
from reviewer_recommender.services.ids import IdText, ReviewerIdText, SafeText

IlpBackend = Literal["highs", "cbc"]
InstitutionKey = Literal["affiliation", "email_domain"]

MAX_ID_LENGTH = 300


class RequiredAttribute(BaseModel):
    """Each paper (with positive demand) gets at least ``min_count`` reviewers whose attribute
    ``name`` equals ``value``. Compared after collapsing whitespace and ignoring case, so
    ``Senior`` matches ``senior``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    value: str = Field(max_length=1000)
    min_count: int = Field(default=1, ge=0, le=1000)

    @classmethod
    def parse(cls, text: str) -> RequiredAttribute:
        """``NAME=VALUE`` (the command-line form); ValueError if malformed."""
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected NAME=VALUE, got {text!r}")
        return cls(name=name.strip(), value=value.strip())

    def describe(self) -> str:
        count = f"{self.min_count} x " if self.min_count != 1 else ""
        return f"{count}{self.name}={self.value}"


class ConflictParams(BaseModel):
    """How conflicts of interest are detected from profiles (see
    :func:`recommender.conflicts.detect_conflicts` for the reasons)."""

    model_config = ConfigDict(extra="forbid")

    coauthor_window_years: int | None = Field(
        default=3,
        ge=0,
        le=100,
        description="co-authorship counts when the publication is at most this many years "
        "older than the reference year; null: any year",
    )
    reference_year: int | None = Field(
        default=None,
        ge=1900,
        le=2200,
        description="year the window counts back from (default: now)",
    )
    coauthors: bool = Field(default=True, description="detect recent co-authors")
    same_institution: bool = Field(
        default=True, description="reviewer's affiliation equals an author's"
    )
    same_email_domain: bool = Field(
        default=True,
        description="reviewer's email domain equals an author's (public mail excepted)",
    )


class LimitParams(BaseModel):
    """Demand, loads and bid weight: what every assignment-making use case shares (a solve,
    :class:`AssignParams`; a re-assignment, :class:`ReassignParams`), defined once.

    Each paper gets exactly its demand (``reviewers_per_paper``, or its entry in
    ``demand``); each reviewer gets between ``min_load`` and their max load (``max_load`` or
    their ``custom_max_load`` entry; a max below ``min_load`` lowers that reviewer's minimum
    to it); bids given with the inputs add ``bid_weight x bid`` to their pair's score."""

    model_config = ConfigDict(extra="forbid")

    reviewers_per_paper: int = Field(default=3, ge=0, le=1000, description="default demand")
    min_load: int = Field(default=0, ge=0, le=10_000, description="minimum papers per reviewer")
    max_load: int = Field(default=6, ge=0, le=100_000, description="maximum papers per reviewer")
    demand: dict[str, int] = Field(
        default_factory=dict,
        description="paper id -> reviewers it needs, overriding reviewers_per_paper",
    )
    custom_max_load: dict[str, int] = Field(
        default_factory=dict, description="reviewer id -> max load overriding max_load"
    )
    bid_weight: float = Field(
        default=DEFAULT_BID_WEIGHT,
        ge=-1000,
        le=1000,
        description="bids given with the solve add bid_weight x bid to the pair's score",
    )

    @field_validator("demand", "custom_max_load")
    @classmethod
    def _per_id_counts(cls, value: dict[str, int]) -> dict[str, int]:
        for key, count in value.items():
            if not key or len(key) > MAX_ID_LENGTH:
                raise ValueError(f"id {key[:40]!r} must have 1 to {MAX_ID_LENGTH} characters")
            if not 0 <= count <= 100_000:
                raise ValueError(f"{key!r}: {count} is outside 0..100000")
        return value

    @model_validator(mode="after")
    def _loads_in_order(self) -> LimitParams:
        if self.min_load > self.max_load:
            raise ValueError(
                f"min_load: {self.min_load} exceeds the maximum load {self.max_load}; no "
                "reviewer could meet both"
            )
        return self


class AssignParams(LimitParams):
    """Every option of an assignment solve.

    Hard constraints: each paper gets exactly its demand (``reviewers_per_paper``, or its
    entry in ``demand``); each reviewer gets between ``min_load`` and their max load
    (``max_load`` or their ``custom_max_load`` entry; a max below ``min_load`` lowers that
    reviewer's minimum to it); conflicts and Not Willing bids are never assigned; pins
    always are. Side constraints (``fairness_keep``, ``max_per_affiliation``,
    ``require_attribute``) need the integer program, which ``solver="auto"`` then picks.
    """

    solver: str = Field(
        default="auto",
        max_length=50,
        description="auto, flow, ilp (alias pulp), randomized or perturbed; auto: min-cost "
        "flow, or the ILP when a side constraint needs it, perturbed maximization when "
        "perturbation is set, the randomized solver when probability_cap alone is set (an "
        "unknown name is refused by reviewer_recommender.services.assignment.validate_options)",
    )
    ilp_backend: IlpBackend = Field(default="highs", description="MIP solver behind the ILP")
    time_limit: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        description="seconds the ILP or the randomized LP may take (refused for the "
        "min-cost flows, which are exact and cannot be stopped early)",
    )
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    min_score: float | None = Field(
        default=None, description="never assign a (non-pinned) pair scoring below this"
    )
    max_per_affiliation: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="at most this many reviewers of one institution per paper",
    )
    institution_key: InstitutionKey = Field(
        default="affiliation",
        description="what makes two reviewers the same institution for max_per_affiliation",
    )
    fairness_keep: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="max-min fairness over papers first, keeping this share of the best minimum",
    )
    require_attribute: RequiredAttribute | None = None
    probability_cap: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="randomized assignment: no pair is assigned with probability above this",
    )
    perturbation: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="randomized assignment by perturbed maximization (Xu et al., 2023): "
        "maximize sum s (x - beta x^2) over fractional assignments and sample one with "
        "these marginals; beta trades expected quality (at least 1 - beta of the optimum "
        "with non-negative scores) for randomness; with probability_cap, x <= the cap too",
    )
    alternates: int = Field(
        default=0, ge=0, le=1000, description="next-best eligible reviewers listed per paper"
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_options(cls, data: Any) -> Any:
        """Version 0.1 sent solver constructor options as ``options``: ``backend`` and ``q``
        map onto ``ilp_backend`` and ``probability_cap``; anything else is refused."""
        if not isinstance(data, dict) or "options" not in data:
            return data
        data = dict(data)
        options = data.pop("options") or {}
        if not isinstance(options, dict):
            raise ValueError("options must be an object")
        mapping = {"backend": "ilp_backend", "q": "probability_cap"}
        unknown = sorted(set(options) - set(mapping))
        if unknown:
            raise ValueError(
                f"options: unknown solver option(s) {', '.join(unknown)}; use ilp_backend "
                "and probability_cap"
            )
        for old, new in mapping.items():
            if old in options and options[old] is not None:
                data.setdefault(new, options[old])
        return data

    def side_constraint_names(self) -> list[str]:
        """The options that need the integer program, by field name."""
        names = []
        if self.fairness_keep is not None:
            names.append("fairness_keep")
        if self.max_per_affiliation is not None:
            names.append("max_per_affiliation")
        if self.require_attribute is not None:
            names.append("require_attribute")
        return names

    def needs_profiles(self) -> bool:
        """Side constraints that read reviewer profiles (affiliation, email, attributes)."""
        return self.max_per_affiliation is not None or self.require_attribute is not None


class ScoreParams(BaseModel):
    """Options of ``score`` that are neither scoring parameters
    (:class:`recommender.affinity.ScoringParams`) nor run options
    (:class:`recommender.affinity.RunOptions`): what to write, the engine, the bid weight
    (recorded in the scoring parameters of the written scores)."""

    model_config = ConfigDict(extra="forbid")

    bid_weight: float = Field(default=DEFAULT_BID_WEIGHT, ge=-1000, le=1000)
    top_k: int | None = Field(default=None, ge=1, le=1_000_000)
    engine: Literal["local", "dask"] = "local"
    scheduler: str | None = Field(default=None, max_length=500)

    @model_validator(mode="after")
    def _scheduler_needs_dask(self) -> ScoreParams:
        if self.scheduler is not None and self.engine != "dask":
            raise ValueError("scheduler: needs the dask engine")
        return self


class ReassignParams(LimitParams):
    """Options of an emergency re-assignment (:mod:`reviewer_recommender.services.reassign`): the
    demand and
    loads the repaired assignment must meet and the weight of bids folded into scores (the
    same fields, meanings and defaults as :class:`AssignParams`'s). Withdrawn reviewers get
    a max load of 0 whatever these say."""

    def assign_params(self) -> AssignParams:
        """The same options as :class:`AssignParams` (what the problem builder reads)."""
        return AssignParams.model_validate(self.model_dump())


class RequiredAttributeIn(RequiredAttribute):
    """:class:`reviewer_recommender.services.params.RequiredAttribute` with the service's text rule
    on its name
    and value (no control characters)."""

    name: SafeText = Field(min_length=1, max_length=200)
    value: SafeText = Field(max_length=1000)


Count = Annotated[int, Field(ge=0, le=100_000)]

# the solve options of the service that are not the assignment use case's (AssignParams):
# which pool is solved and the cross-level rules (read by services.assignment_store)
LEVEL_OPTIONS = ("pool", "distinct_institutions", "sac_top_k")


class AssignmentIn(AssignParams):
    """A solve request: every option of :class:`reviewer_recommender.services.params.AssignParams`
    (the same
    fields and defaults as the command line's ``assign``), with the service's id and text
    rules on map keys (a reviewer id's leading ``~`` dropped, as uploads do), finite numbers
    only, and a time limit bounded for a shared server."""

    demand: dict[IdText, Count] = Field(
        default_factory=dict,
        description="paper id -> reviewers it needs, overriding reviewers_per_paper; the "
        "venue's stored paper demands win over it",
        max_length=1_000_000,
    )
    custom_max_load: dict[ReviewerIdText, Count] = Field(
        default_factory=dict,
        description="reviewer id -> max load overriding max_load; the venue's stored "
        "reviewer max loads win over it",
        max_length=1_000_000,
    )
    time_limit: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        description="seconds the ILP or the randomized LP may take (at most an "
        "hour; refused for the min-cost flows, which cannot be stopped early)",
    )
    min_score: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="never assign a (non-pinned) pair scoring below this",
    )
    require_attribute: RequiredAttributeIn | None = None
    bid_weight: float = Field(
        default=DEFAULT_BID_WEIGHT,
        description="not a solve option here: the venue's bids are folded into scores when "
        "affinities are computed (the affinity config's bid_weight); any other value than "
        f"the default {DEFAULT_BID_WEIGHT} is refused",
    )
    alternates: int = Field(
        default=0,
        description="not a solve option here: a paper's next-best reviewers are listed live "
        "(GET .../assignments/{id}/papers/{paper_id}?alternates=N and the edge browser); any "
        "other value than 0 is refused",
    )
    pool: Literal["reviewers", "area_chairs", "senior_area_chairs"] = Field(
        default="reviewers",
        exclude=True,
        description="whose assignment: the persons of this pool to the submissions (the "
        "reviewers' by default), or senior_area_chairs to the area chairs of the live "
        "area-chair run",
    )
    distinct_institutions: bool = Field(
        default=False,
        exclude=True,
        description="reviewers pool: no reviewer of a paper shares an institution "
        "(institution_key) with the paper's area chair in the live area-chair run",
    )
    sac_top_k: int = Field(
        default=3,
        ge=1,
        le=1000,
        exclude=True,
        description="senior_area_chairs pool: a senior area chair's affinity to an area chair "
        "is the mean of their k best scores over the area chair's papers",
    )
    name: SafeText = Field(
        default="", max_length=200, exclude=True, description="the new run's name"
    )
    note: SafeText = Field(
        default="", max_length=5000, exclude=True, description="a note on the new run"
    )

    def level_options(self) -> dict[str, Any]:
        """The level options (:data:`LEVEL_OPTIONS`: which pool, the cross-level rules),
        which a dump leaves out: the solve options proper are the use case's
        (:class:`AssignParams`)."""
        return {name: getattr(self, name) for name in LEVEL_OPTIONS}

    def solve_parameters(self) -> dict[str, Any]:
        """Every option of the request as JSON, the level options included (what a job and
        a run record)."""
        return {**self.model_dump(mode="json"), **self.level_options()}

    @field_validator("bid_weight")
    @classmethod
    def _bids_fold_at_scoring(cls, value: float) -> float:
        if value != DEFAULT_BID_WEIGHT:
            raise ValueError(
                "a solve does not fold bids: the venue's bids are folded into the scores "
                "when affinities are computed, with the affinity config's bid_weight "
                "(POST /venues/{venue_id}/affinity/jobs); Not Willing bids are never "
                "assigned either way"
            )
        return value

    @field_validator("alternates")
    @classmethod
    def _alternates_are_live(cls, value: int) -> int:
        if value != 0:
            raise ValueError(
                "a run does not store alternates: list a paper's next-best reviewers with "
                "GET /venues/{venue_id}/assignments/{id}/papers/{paper_id}?alternates=N or "
                "the paper's edges"
            )
        return value


class ResolveIn(BaseModel):
    """Solve again from a run: its parameters (or ``parameters``, which replace them) with
    the venue's current pins, forbids, conflicts and stored limits."""

    name: SafeText = Field(default="", max_length=200)
    note: SafeText = Field(default="", max_length=5000)
    parameters: AssignmentIn | None = Field(
        default=None, description="the solve options; null: the run's own"
    )
