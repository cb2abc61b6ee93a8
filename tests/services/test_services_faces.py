"""Generated instances through the faces: ``recommender assign`` on files (in-process) and
the API's solve job, both checked against an independent exact PuLP model, and against each
other (same inputs and options -> identical assignments)."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pandas as pd
import pytest
from faces_helpers import (
    BID_VALUES,
    EXCLUDING,
    ApiFace,
    Format,
    Instance,
    check_hard_constraints,
    cli_args,
    objective_of,
    oracle,
    run_cli,
    tolerance,
    write_instance,
)
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis.errors import InvalidArgument

SCORES = st.one_of(
    st.floats(min_value=-1, max_value=1, allow_nan=False).map(lambda v: round(v, 6)),
    st.sampled_from([0.0, 1.0, -1.0, 1e9, -1e9, 1e-12, 123456.789, 1e11, -1e11]),
)
LABELS = st.sampled_from([*BID_VALUES, *EXCLUDING])


@st.composite
def instances(draw: st.DrawFn, unknown_ids: bool = True, roomy: bool = False) -> Instance:
    """Small instances; ``roomy`` ones have more reviewers and capacity, so that most of
    them can be solved."""
    n_papers = draw(st.integers(1, 4))
    n_reviewers = draw(st.integers(3, 6) if roomy else st.integers(1, 5))
    papers = [f"p{i}" for i in range(n_papers)]
    reviewers = [f"r{i}" for i in range(n_reviewers)]
    every = [(p, r) for p in papers for r in reviewers]
    dense = roomy or draw(st.booleans())
    pairs = every if dense else draw(st.lists(st.sampled_from(every), unique=True, min_size=0))
    scores = {pair: draw(SCORES) for pair in pairs}
    pool = [*every, ("p9", "r0"), ("p0", "r9")] if unknown_ids else every
    conflicts = draw(st.lists(st.sampled_from(pool), max_size=4, unique=True))
    pins = draw(st.lists(st.sampled_from(pool), max_size=2, unique=True))
    pins = [pair for pair in pins if pair not in conflicts]
    bids = draw(st.dictionaries(st.sampled_from(pool), LABELS, max_size=4))
    paper_pool = [*papers, "p9"] if unknown_ids else papers
    reviewer_pool = [*reviewers, "r9"] if unknown_ids else reviewers
    demand = draw(st.dictionaries(st.sampled_from(paper_pool), st.integers(0, 3), max_size=2))
    custom = draw(st.dictionaries(st.sampled_from(reviewer_pool), st.integers(0, 4), max_size=2))
    return Instance(
        scores=scores,
        conflicts=conflicts,
        pins=pins,
        bids=bids,
        demand=demand,
        custom_max=custom,
        reviewers_per_paper=draw(st.integers(0, 2) if roomy else st.integers(0, 3)),
        min_load=0 if roomy else draw(st.integers(0, 2)),
        max_load=draw(st.integers(2, 4) if roomy else st.integers(0, 4)),
        bid_weight=draw(st.sampled_from([0.0, 0.1, 0.5, 2.0])),
    )


FORMATS = st.builds(
    Format,
    header=st.booleans(),
    bom=st.booleans(),
    crlf=st.booleans(),
    blank_lines=st.booleans(),
    tilde=st.booleans(),
)


@pytest.fixture(scope="module")
def api_face(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiFace]:
    from api.app import create_app
    from reviewer_recommender.settings import Settings

    folder = tmp_path_factory.mktemp("faces")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'faces.db'}",
        data_dir=folder,
        inline_jobs=True,
        max_upload_bytes=1024 * 1024,
        affinity_top_n=5,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        yield ApiFace(client, app.state.database)


def _cli_pairs(output: Path) -> list[tuple[str, str]]:
    frame = pd.read_csv(output, dtype={"paper_id": str, "reviewer_id": str})
    return list(zip(frame["paper_id"], frame["reviewer_id"], strict=True))


def _check_cli(instance: Instance, style: Format) -> list[tuple[str, str]] | None:
    """Run the CLI on ``instance`` written in ``style``; assert the documented outcome.
    Returns the assigned pairs when a solve succeeded."""
    expected = oracle(instance)
    with contextlib.suppress(InvalidArgument):  # outside a hypothesis test
        event(f"outcome: {expected.outcome}")
    with tempfile.TemporaryDirectory() as folder:
        files = write_instance(instance, Path(folder), style)
        output = Path(folder) / "out" / "assignment.csv"
        code, out, err = run_cli(cli_args(instance, files, output))
        assert "Traceback" not in out + err
        assert code != 3, err
        if expected.outcome == "error":
            assert code == 1, (expected.reason, code, err)
            assert not output.exists()
            # the problem names a file (or the option at fault)
            assert any(str(path) in err for path in files.values()) or "--" in err, err
            return None
        if expected.outcome == "infeasible":
            assert code == 2, (err, out)
            assert err.startswith("infeasible:") or "no assignment" in err
            assert not output.exists()
            return None
        assert code == 0, err
        pairs = _cli_pairs(output)
        check_hard_constraints(instance, pairs)
        assert abs(objective_of(instance, pairs) - expected.objective) <= tolerance(instance)
        summary = json.loads((output.parent / "assignment.summary.json").read_text())
        assert summary["upper_bound"] >= summary["objective"] - tolerance(instance)
        assert len(summary["per_paper"]) == len(instance.papers)
        if instance.has_unknown_ids():
            assert "warning:" in err
        return pairs


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(instance=instances(), style=FORMATS)
def test_cli_assign_matches_the_exact_model(instance: Instance, style: Format) -> None:
    _check_cli(instance, style)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(instance=instances(roomy=True), style=FORMATS)
def test_cli_assign_solves_roomy_instances_exactly(instance: Instance, style: Format) -> None:
    _check_cli(instance, style)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(instance=instances(unknown_ids=False, roomy=True), style=FORMATS)
def test_api_job_and_cli_agree_with_the_exact_model(
    api_face: ApiFace, instance: Instance, style: Format
) -> None:
    # a venue always has papers and reviewers with scores (the affinity job refuses
    # otherwise), and the API refuses a minimum load above the maximum in the request
    assume(instance.scores and instance.min_load <= instance.max_load)
    assume(not instance.has_unknown_ids())  # a venue knows only its own ids
    cli_pairs = _check_cli(instance, style)
    expected = oracle(instance)
    state, result = api_face.solve(instance)
    if expected.outcome == "optimal":
        assert state == "ok", result
        assert isinstance(result, list)
        check_hard_constraints(instance, result)
        assert abs(objective_of(instance, result) - expected.objective) <= tolerance(instance)
        # parity: the same assignment, not just an equally good one
        assert sorted(result) == sorted(cli_pairs or [])
    elif expected.outcome == "infeasible":
        assert state in ("failed", "refused") and "infeasible" in str(result), result
    else:
        # a pin that cannot act fails the job; the router's capacity check may refuse first
        assert (state == "failed" and "cannot build" in str(result)) or (
            state == "refused" and "infeasible" in str(result)
        ), result


def test_parity_on_a_venue_with_every_input(api_face: ApiFace, tmp_path: Path) -> None:
    """One hand-made venue: conflicts, pins, bids of every label, demand and loads."""
    papers = [f"p{i}" for i in range(6)]
    reviewers = [f"r{i}" for i in range(7)]
    scores = {
        (p, r): round(((i * 7 + j * 3) % 11) / 10 + 0.01 * j, 4)
        for i, p in enumerate(papers)
        for j, r in enumerate(reviewers)
    }
    instance = Instance(
        scores=scores,
        conflicts=[("p0", "r0"), ("p1", "r1"), ("p2", "r3")],
        pins=[("p3", "r3"), ("p4", "r0")],
        bids={
            ("p0", "r1"): "Very High",
            ("p1", "r2"): "Not Willing",
            ("p2", "r2"): "Conflict",
            ("p5", "r6"): "Low",
            ("p5", "r5"): "High",
        },
        demand={"p5": 3, "p0": 1},
        custom_max={"r6": 1, "r0": 4},
        reviewers_per_paper=2,
        min_load=1,
        max_load=3,
        bid_weight=0.3,
    )
    cli_pairs = _check_cli(instance, Format(header=True, bom=True, tilde=True))
    state, api_pairs = api_face.solve(instance)
    assert state == "ok"
    assert cli_pairs is not None and sorted(api_pairs) == sorted(cli_pairs)
    # the venue's stored demand and max-load tables act as the CLI's --demand and
    # --custom-max-papers files do
    state, stored_pairs = api_face.solve(instance, stored_limits=True)
    assert state == "ok", stored_pairs
    assert sorted(stored_pairs) == sorted(cli_pairs)


def test_same_defaults_on_every_face() -> None:
    """The CLI's assign flags default to nothing (the model's defaults apply), the API body
    is the same model: one source of defaults."""
    from reviewer_recommender.cli.assign import assign_params
    from reviewer_recommender.cli.main import build_parser
    from reviewer_recommender.services.params import AssignmentIn, AssignParams

    args = build_parser().parse_args(["assign", "--scores", "s.csv", "--output", "a.csv"])
    from_cli = assign_params(args)
    assert from_cli == AssignParams()
    assert AssignmentIn().model_dump(exclude={"time_limit"}) == AssignParams().model_dump(
        exclude={"time_limit"}
    )
    assert AssignmentIn().time_limit == AssignParams().time_limit


def _params(**values: Any) -> Any:
    from reviewer_recommender.services.params import AssignParams

    return AssignParams(**values)


def test_legacy_solver_options_map_onto_typed_fields() -> None:
    params = _params(options={"backend": "cbc", "q": 0.4})
    assert params.ilp_backend == "cbc" and params.probability_cap == 0.4
    with pytest.raises(ValueError, match="unknown solver option"):
        _params(options={"threads": 2})
