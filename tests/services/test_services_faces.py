"""Generated instances through the faces: ``recommender assign`` on files (in-process) and
the API's solve job, both checked against an independent exact PuLP model, and against each
other (same inputs and options -> identical assignments); ``recommender score`` and the
API's affinity job on the same files (the same kept pairs, folded bids and conflicts)."""

from __future__ import annotations

import contextlib
import datetime
import json
import tempfile
import uuid
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


# --- scoring: ``recommender score`` on files and the API's affinity job on the same files ---


def _scoring_files(folder: Path) -> dict[str, Path]:
    """A small venue as files both faces read: reviewers (with co-authors, affiliations and
    emails), submissions (authors, author emails and affiliations), bids of every kind and
    a pin."""
    recent = datetime.datetime.now(datetime.UTC).year - 1
    coauthors = ("Zed Colleague", "Ann Author")

    def name_of(reviewer_id: str) -> str:
        return reviewer_id.rstrip("1").replace("_", " ")

    topics = {
        "Grace_Graph1": ("graph neural networks message passing", "Graph University"),
        "Victor_Vision1": ("image segmentation convolutional decoders", "Vision Institute"),
        "Rita_Reinforce1": ("offline reinforcement learning policies", "Agents Lab"),
        "Lena_Language1": ("transformer language models translation", "Language Center"),
        "Omar_Optim1": ("stochastic gradient descent convergence", "Optimisation Group"),
        "Sam_Speech1": ("speech recognition acoustic models", "Audio Lab"),
    }
    reviewers = [
        {
            "id": f"~{rid}",
            "name": name_of(rid),
            "email": f"{rid.split('_')[0].lower()}@{affiliation.split()[0].lower()}.example.org",
            "affiliation": affiliation,
            "publications": [
                {
                    "title": f"{topic} {variant}",
                    "abstract": f"We study {topic} with {variant} methods.",
                    "year": recent - k,
                    # Grace wrote recently with P1's author
                    "authors": [name_of(rid), coauthors[rid == "Grace_Graph1"]],
                }
                for k, variant in enumerate(("scalable", "robust"))
            ],
        }
        # by id, as a venue reads them: equal scores keep the lower index in a top list
        for rid, (topic, affiliation) in sorted(topics.items())
    ]
    titles = [
        "message passing graph networks for molecules",
        "convolutional decoders for image segmentation",
        "conservative offline reinforcement learning",
        "attention language models for translation",
        "convergence of stochastic gradient methods",
        "acoustic models for speech recognition",
        "graph convolutions for image segmentation",
    ]
    submissions = [
        {
            "id": f"P{i + 1}",
            "title": title,
            "abstract": f"We improve {title} with a simple idea.",
            "authors": [["Ann Author"], ["Bob Author"], ["Rita Reinforce"], ["Cy Author"]][i % 4],
            "authorids": ["cy@language.example.org"] if i == 3 else [],
            "author_affiliations": ["Vision Institute"] if i == 1 else [],
        }
        for i, title in enumerate(titles)
    ]
    files = {
        "reviewers": folder / "reviewers.json",
        "submissions": folder / "submissions.json",
        "bids": folder / "bids.csv",
        "pins": folder / "pins.csv",
    }
    files["reviewers"].write_text(json.dumps(reviewers), encoding="utf-8")
    files["submissions"].write_text(json.dumps(submissions), encoding="utf-8")
    files["bids"].write_text(
        "paper_id,reviewer_id,bid\n"
        "P1,~Grace_Graph1,Very High\nP2,Rita_Reinforce1,Low\nP1,Lena_Language1,Not Willing\n"
        "P4,Victor_Vision1,Conflict\nP5,Omar_Optim1,High\nP6,Sam_Speech1,Very Low\n"
        "P7,Grace_Graph1,Not Willing\n",
        encoding="utf-8",
    )
    files["pins"].write_text("paper_id,reviewer_id,value\nP6,Lena_Language1,1\n")
    return files


def _score_frame(path: Path) -> dict[tuple[str, str], float]:
    frame = pd.read_csv(path, dtype={"paper_id": str, "reviewer_id": str})
    return {
        (p, r): float(s)
        for p, r, s in zip(frame["paper_id"], frame["reviewer_id"], frame["score"], strict=True)
    }


def test_cli_score_and_the_affinity_job_keep_the_same_pairs_conflicts_and_bids(
    api_face: ApiFace, tmp_path: Path
) -> None:
    """The one scoring use case through both faces: the same top pairs (each side's top 2
    among the pairs bids allow), the same folded bid scores, the same detected conflicts;
    the venue also keeps its pin and the pairs bids exclude, outside the top lists."""
    from reviewer_recommender.services.tokens import create_token
    from reviewer_recommender.storage.models import AffinityRun, AffinityScore

    files = _scoring_files(tmp_path)
    corpus = ["--archives", str(files["reviewers"]), "--submissions", str(files["submissions"])]
    scoring = ["--method", "tfidf", "--aggregation", "max", "--cache-dir", str(tmp_path / "c")]
    raw_path, cli_path = tmp_path / "raw.csv", tmp_path / "scores.csv"
    conflicts_path = tmp_path / "conflicts.csv"
    code, _out, err = run_cli(["score", *corpus, *scoring, "--output", str(raw_path)])
    assert code == 0, err
    bids = ["--bids", str(files["bids"]), "--bid-weight", "0.3"]
    kept = ["--top-k", "2", "--conflicts-output", str(conflicts_path)]
    code, out, err = run_cli(["score", *corpus, *scoring, "--output", str(cli_path), *bids, *kept])
    assert code == 0, err
    assert "3 Not Willing pairs left out" in out and f"-> {conflicts_path}" in out
    raw, cli = _score_frame(raw_path), _score_frame(cli_path)
    cli_config = json.loads((tmp_path / "scores.config.json").read_text())

    venue = f"v-{uuid.uuid4().hex[:10]}"
    admin = create_token(api_face.database, name="admin", role="admin")
    client = api_face.client
    assert client.post(
        "/venues", json={"id": venue, "name": venue}, headers={"Authorization": f"Bearer {admin}"}
    ).is_success
    chair = create_token(api_face.database, name=f"chair@{venue}", role="chair", venue_id=venue)
    headers = {"Authorization": f"Bearer {chair}"}
    for kind, path in (
        ("reviewers", files["reviewers"]),
        ("submissions", files["submissions"]),
        ("bids", files["bids"]),
        ("constraints", files["pins"]),
    ):
        response = client.post(
            f"/venues/{venue}/{kind}/upload",
            files={"file": (path.name, path.read_bytes())},
            headers=headers,
        )
        assert response.status_code == 200, (kind, response.text)
    config = {"method": "tfidf", "aggregation": "max", "bid_weight": 0.3}
    job = client.post(
        f"/venues/{venue}/affinity/jobs", json={"config": config, "top_n": 2}, headers=headers
    ).json()
    assert job["state"] == "succeeded", job
    with api_face.database.session() as session:
        run = session.get(AffinityRun, job["result"]["affinity_run_id"])
        assert run is not None
        statistics = dict(run.statistics)
        stored = {
            (row.paper_id, row.reviewer_id): (row.score, row.requested)
            for row in session.query(AffinityScore).filter(AffinityScore.run_id == run.id)
        }

    # the same top pairs with the same scores (the CSV holds six significant digits)
    top = {pair: score for pair, (score, requested) in stored.items() if not requested}
    assert set(top) == set(cli)
    assert all(abs(top[pair] - cli[pair]) <= 2e-6 for pair in cli)
    # outside the top lists, the venue keeps its pin and the pairs bids exclude
    outside = {pair for pair, (_score, requested) in stored.items() if requested}
    excluded = {("P1", "Lena_Language1"), ("P4", "Victor_Vision1"), ("P7", "Grace_Graph1")}
    assert excluded <= outside and outside <= excluded | {("P6", "Lena_Language1")}
    assert not excluded & set(cli)
    for pair in excluded:
        assert stored[pair][0] == pytest.approx(raw[pair], abs=2e-6)  # no bid folded in
    # bids folded with the same weight on both faces: score + 0.3 x bid
    for pair, bid in {
        ("P1", "Grace_Graph1"): 1.0,
        ("P2", "Rita_Reinforce1"): -0.5,
        ("P5", "Omar_Optim1"): 0.5,
        ("P6", "Sam_Speech1"): -1.0,
    }.items():
        if pair in cli:
            assert cli[pair] == pytest.approx(raw[pair] + 0.3 * bid, abs=2e-6)
        if pair in stored:
            assert stored[pair][0] == pytest.approx(raw[pair] + 0.3 * bid, abs=2e-6)
        # a pair the run did not keep is scored on request as the run would have kept it
        paper, reviewer = pair
        asked = client.get(
            f"/venues/{venue}/affinity/pairs/{paper}/{reviewer}",
            params={"explain": False},
            headers=headers,
        ).json()
        assert asked["score"] == pytest.approx(raw[pair] + 0.3 * bid, abs=2e-6), pair
    assert ("P2", "Rita_Reinforce1") not in stored  # its Low bid was scored on request
    assert ("P1", "Grace_Graph1") in cli  # a Very High bid lifts it into the paper's top 2
    assert statistics["bids_folded"] == cli_config["bids_folded"] == 4
    assert statistics["not_willing_pairs"] == cli_config["not_willing_pairs_removed"] == 3

    # the same detected conflicts, found with the same parameters
    cli_conflicts = pd.read_csv(conflicts_path, dtype=str)
    listed = client.get(
        f"/venues/{venue}/conflicts", params={"source": "detected", "limit": 500}, headers=headers
    ).json()["items"]
    assert {(c["paper_id"], c["reviewer_id"], c["reason"]) for c in listed} == set(
        zip(
            cli_conflicts["paper_id"],
            cli_conflicts["reviewer_id"],
            cli_conflicts["reason"],
            strict=True,
        )
    )
    assert {(c["paper_id"], c["reviewer_id"]) for c in listed} >= {
        ("P3", "Rita_Reinforce1"),  # an author
        ("P1", "Grace_Graph1"),  # a recent co-author
        ("P2", "Victor_Vision1"),  # the same institution
        ("P4", "Lena_Language1"),  # the same email domain
    }
    assert statistics["conflict_detection"] == cli_config["conflicts"]["detection"]
    assert cli_config["conflicts"]["detection"]["reference_year"] == (
        datetime.datetime.now(datetime.UTC).year
    )
