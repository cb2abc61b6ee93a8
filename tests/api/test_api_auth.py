"""401 without a token, 403 outside role or venue, no endpoint leaks another venue's data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from api_helpers import REVIEWERS, load_venue
from conftest import Api
from fastapi.testclient import TestClient
from sqlalchemy import select

from api.app import create_app
from reviewer_recommender.services.tokens import create_token_cli
from reviewer_recommender.settings import Settings
from reviewer_recommender.storage.models import ApiToken


def _venue_paths(api: Api) -> list[tuple[str, str]]:
    schema = api.client.get("/openapi.json").json()
    return [
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        if path.startswith("/venues/{venue_id}")
        for method in operations
    ]


def _fill(path: str, venue_id: str) -> str:
    filled = path.replace("{venue_id}", venue_id)
    filled = re.sub(r"\{(job_id|assignment_id)\}", "1", filled)
    return re.sub(r"\{[a-z_]+\}", "P1", filled)


def test_missing_or_unknown_token_is_401(api: Api) -> None:
    venue, _chair, _viewer = api.new_venue()
    assert api.client.get(f"/venues/{venue}/reviewers").status_code == 401
    response = api.client.get(
        f"/venues/{venue}/reviewers", headers={"Authorization": "Bearer nope"}
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert api.client.get("/venues").status_code == 401
    assert api.client.get("/health").status_code == 200


def test_tokens_are_stored_hashed(api: Api) -> None:
    with api.database.session() as session:
        hashes = list(session.scalars(select(ApiToken.token_hash)))
    assert api.admin not in hashes
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes)


def test_viewer_cannot_write_and_chair_cannot_create_venues(api: Api) -> None:
    venue, chair, viewer = api.new_venue()
    load_venue(api, venue, chair)
    for method, path in _venue_paths(api):
        if method == "GET":
            continue
        response = api.call(method, _fill(path, venue), viewer, json={})
        assert response.status_code == 403, (method, path, response.text)
    assert api.call("POST", "/venues", chair, json={"id": "new-venue"}).status_code == 403
    assert (
        api.call(
            "POST", f"/venues/{venue}/tokens", chair, json={"name": "x", "role": "chair"}
        ).status_code
        == 403
    )
    # the viewer still reads
    assert api.call("GET", f"/venues/{venue}/papers/P1/reviewers", viewer).status_code == 200


def test_no_endpoint_leaks_another_venue(api: Api) -> None:
    venue_a, chair_a, viewer_a = api.new_venue()
    venue_b, chair_b, _viewer_b = api.new_venue()
    load_venue(api, venue_a, chair_a)
    load_venue(api, venue_b, chair_b)
    job = api.call(
        "POST",
        f"/venues/{venue_a}/assignments",
        chair_a,
        json={"reviewers_per_paper": 1, "max_load": 2},
    ).json()
    assignment_a = job["result"]["assignment_id"]
    for token in (chair_b, _viewer_b):
        for method, path in _venue_paths(api):
            response = api.call(method, _fill(path, venue_a), token, json={})
            assert response.status_code == 403, (method, path, response.status_code, response.text)
            assert "Grace" not in response.text
    # ids from venue A are not reachable through venue B's paths either
    b = f"/venues/{venue_b}"
    assert api.call("GET", f"{b}/assignments/{assignment_a}", chair_b).status_code == 404
    assert api.call("GET", f"{b}/jobs/{job['id']}", chair_b).status_code == 404
    assert api.call("GET", f"{b}/assignments/{assignment_a}/export", chair_b).status_code == 404
    listing = api.call("GET", "/venues", viewer_a).json()
    assert [v["id"] for v in listing["items"]] == [venue_a]
    jobs_b = api.call("GET", f"{b}/jobs", chair_b).json()
    assert all(j["venue_id"] == venue_b for j in jobs_b["items"])
    # a venue's own data stays its own after the other re-uploads the same ids
    renamed = [{**REVIEWERS[0], "name": "Renamed in B"}]
    api.call("POST", f"{b}/reviewers", chair_b, json=renamed)
    grace_a = api.call("GET", f"/venues/{venue_a}/reviewers/Grace_Graph1", viewer_a).json()
    assert grace_a["name"] == "Grace Graph"


def test_admin_reaches_every_venue_and_unknown_venue_is_404(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    assert api.call("GET", f"/venues/{venue}/reviewers", api.admin).json()["total"] == 4
    assert api.call("GET", "/venues/no-such-venue/reviewers", api.admin).status_code == 404
    created = api.call(
        "POST", f"/venues/{venue}/tokens", api.admin, json={"name": "pc", "role": "viewer"}
    )
    assert created.status_code == 201
    assert api.call("GET", f"/venues/{venue}/reviewers", created.json()["token"]).status_code == 200


def test_create_token_cli_bootstraps_a_fresh_database(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'fresh.db'}", data_dir=tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        create_token_cli(role="chair", venue="icml", name="pc-chair", settings=settings)
    secret = create_token_cli(
        role="chair", venue="icml", name="pc-chair", create_venue=True, settings=settings
    )
    app = create_app(settings)
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {secret}"}
        assert client.get("/venues/icml", headers=headers).status_code == 200
        assert client.post("/venues", json={"id": "x"}, headers=headers).status_code == 403
    with pytest.raises(ValueError, match="needs a venue"):
        create_token_cli(role="viewer", settings=settings)
    with pytest.raises(ValueError, match="global"):
        create_token_cli(role="admin", venue="icml", settings=settings)
