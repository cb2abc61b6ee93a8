"""Uploads that cannot hurt the server: zip limits that hold for many small members as for one
big one, JSON and CSV bombs refused in words, chunked oversize bodies refused while they
stream, and no upload parsed on the event loop, so ``/health`` keeps answering (its latency
under each attack: ``benchmarks/bench_live_safety.py``)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Api, make_settings
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from live_server import run_server
from zip_bombs import make_zip, with_declared_size, zip_of_copies

from api.app import create_app

MiB = 1024 * 1024


def _note(title: str) -> bytes:
    return (json.dumps({"id": title, "content": {"title": title, "abstract": "a"}}) + "\n").encode()


def _incompressible(size: int) -> bytes:
    return os.urandom(size // 2 + 1).hex().encode()[:size]


@pytest.fixture
def strict_api(database_url: str, tmp_path: Path) -> Iterator[Api]:
    """A service with small archive limits, so each test archive stays small."""
    settings = make_settings(
        database_url,
        tmp_path,
        max_upload_bytes=4 * MiB,
        max_json_bytes=64 * 1024,
        max_archive_members=50,
        max_uncompressed_bytes=MiB,
        max_compression_ratio=100,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        yield Api(client, app.state.database)


def _upload(api: Api, venue: str, token: str, name: str, content: bytes) -> Any:
    return api.call(
        "POST",
        f"/venues/{venue}/reviewers/upload",
        token,
        files={"file": (name, content, "application/octet-stream")},
    )


# name -> (zip bytes, file the first problem names, words it must contain)
ZIP_CASES: dict[str, tuple[bytes, str, list[str]]] = {
    "too many tiny members": (
        make_zip({f"~r{i}.jsonl": _note(f"p{i}") for i in range(60)}),
        "x.zip",
        ["60 entries", "at most 50"],
    ),
    "many small members over the byte budget": (
        make_zip({f"~r{i}.jsonl": _incompressible(40 * 1024) for i in range(40)}),
        "x.zip",
        ["expands to", f"at most {MiB} allowed"],
    ),
    "one big member over the byte budget": (
        make_zip({"~big.jsonl": _incompressible(MiB + 1)}),
        "x.zip",
        ["expands to", f"at most {MiB} allowed"],
    ),
    "one member that compresses too well": (
        make_zip({"~big.jsonl": b"\n" * (MiB - 1)}),
        "x.zip:~big.jsonl",
        ["expands", "at most 100 allowed", "zip bomb"],
    ),
    "many small members that compress too well": (
        zip_of_copies([f"~r{i}.jsonl" for i in range(15)], b"\n" * 60 * 1024),
        "x.zip",
        ["times its size", "at most 100 allowed", "zip bomb"],
    ),
    "a member that lies about its size": (
        with_declared_size(
            make_zip({"~ok.jsonl": _note("fine"), "~liar.jsonl": _incompressible(50_000)}),
            "~liar.jsonl",
            100,
        ),
        "x.zip:~liar.jsonl",
        ["cannot read zip member"],
    ),
}


@pytest.mark.parametrize("case", list(ZIP_CASES))
def test_zip_limits_name_the_member_and_the_limit(strict_api: Api, case: str) -> None:
    content, file, words = ZIP_CASES[case]
    venue, chair, _viewer = strict_api.new_venue()
    response = _upload(strict_api, venue, chair, "x.zip", content)
    assert response.status_code == 422, response.text
    problems = response.json()["problems"]
    assert any(
        p["file"] == file and all(word in p["message"] for word in words) for p in problems
    ), problems
    assert strict_api.call("GET", f"/venues/{venue}/reviewers", chair).json()["total"] == 0


def test_zip_within_the_limits_is_read(strict_api: Api) -> None:
    venue, chair, _viewer = strict_api.new_venue()
    content = make_zip({f"folder/~r{i}.jsonl": _note(f"paper {i}") for i in range(40)})
    response = _upload(strict_api, venue, chair, "x.zip", content)
    assert response.status_code == 200, response.text
    assert response.json()["created"] == 40


JSON_BOMBS: dict[str, tuple[str, str, bytes, str]] = {
    # name -> (route, file name, content, words of the problem)
    "nested json file": ("submissions/upload", "s.json", b"[" * 200_000, "nested too deeply"),
    "nested jsonl line": ("submissions/upload", "s.jsonl", b"{}\n" + b"[" * 5000, "nested"),
    "huge integer": (
        "submissions/upload",
        "s.json",
        b'[{"id": "p", "title": ' + b"9" * 5000 + b"}]",
        "digits",
    ),
    "huge year string": (
        "reviewers/upload",
        "r.json",
        json.dumps([{"id": "r", "publications": [{"title": "t", "year": "1" * 5000}]}]).encode(),
        "not a year",
    ),
    "very long csv field": (
        "submissions/upload",
        "s.csv",
        b"id,title\np," + b"x" * MiB + b"\n",
        "field larger than field limit",
    ),
}


@pytest.mark.parametrize("case", list(JSON_BOMBS))
def test_json_and_csv_bombs_are_refused_in_words(api: Api, case: str) -> None:
    route, name, content, words = JSON_BOMBS[case]
    venue, chair, _viewer = api.new_venue()
    response = api.call(
        "POST", f"/venues/{venue}/{route}", chair, files={"file": (name, content, "text/plain")}
    )
    assert response.status_code == 422, response.text
    problems = response.json()["problems"]
    assert any(words in p["message"] for p in problems), problems
    assert all(len(p["message"]) <= 300 for p in problems)


def test_huge_numbers_in_tables_are_refused(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    response = api.call(
        "POST",
        f"/venues/{venue}/assignments/with-max-papers",
        chair,
        files={"max_papers": ("max.csv", b"reviewer_id,max\nr," + b"9" * 5000 + b"\n")},
    )
    assert response.status_code == 422, response.text
    assert "whole number" in response.json()["problems"][0]["message"]


def test_json_bodies_are_parsed_like_files(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    for body in (b"[" * 200_000, b'[{"id": ' + b"1" * 5000 + b"}]", b"not json", b"{}"):
        response = api.client.post(
            f"/venues/{venue}/submissions",
            content=body,
            headers={**api.headers(chair), "content-type": "application/json"},
        )
        assert response.status_code == 422, (body[:20], response.text)
        assert response.json()["problems"][0]["file"] == "request body.json"


def test_json_bodies_decoded_on_the_event_loop_are_small(strict_api: Api) -> None:
    """FastAPI decodes ordinary JSON bodies on the event loop: they get a small limit; the
    bulk routes (parsed on a worker thread) take bodies up to the upload limit."""
    venue, chair, _viewer = strict_api.new_venue()
    big_options = {"reviewers_per_paper": 1, "options": {f"k{i}": i for i in range(20_000)}}
    response = strict_api.call("POST", f"/venues/{venue}/assignments", chair, json=big_options)
    assert response.status_code == 413, response.text
    assert "65536 bytes for this request" in response.json()["detail"]
    reviewers = [
        {"id": f"r{i}", "publications": [{"title": "graph networks " * 20}]} for i in range(400)
    ]
    assert len(json.dumps(reviewers)) > 64 * 1024
    response = strict_api.call("POST", f"/venues/{venue}/reviewers", chair, json=reviewers)
    assert response.status_code == 200, response.text
    assert response.json()["created"] == 400


def test_many_bad_rows_give_a_bounded_report(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    rows = b"".join(b"p,r," + b"=" * 10_000 + b"\n" for _ in range(150))
    response = api.call(
        "POST",
        f"/venues/{venue}/bids/upload",
        chair,
        files={"file": ("bids.csv", b"paper_id,reviewer_id,bid\n" + rows, "text/csv")},
    )
    assert response.status_code == 422
    problems = response.json()["problems"]
    assert len(problems) == 150 and all(len(p["message"]) <= 300 for p in problems)
    assert len(response.content) < 100_000  # 1.5 MB in, a short report out


def test_no_route_but_health_runs_on_the_event_loop(api: Api) -> None:
    """Every ``async def`` route would run on the event loop; only the trivial ones may:
    ``/health``, and the job long poll, which only awaits between looks at the job, each
    look a short session on a worker thread (so that a waiting poll holds no thread)."""
    routes = [
        (context.path, context.original_route)
        for context in iter_route_contexts(api.client.app.routes)
        if isinstance(context.original_route, APIRoute)
    ]
    assert len(routes) > 30  # the routers' routes, not only the app's own
    on_loop = {path for path, route in routes if asyncio.iscoroutinefunction(route.endpoint)}
    assert on_loop == {"/health", "/venues/{venue_id}/jobs/{job_id}"}


def _chunked_multipart(size: int) -> Iterator[bytes]:
    yield (
        b'--bound\r\nContent-Disposition: form-data; name="file"; filename="r.jsonl"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    for _ in range(size // (256 * 1024)):
        yield b"x" * (256 * 1024)
    yield b"\r\n--bound--\r\n"


def test_live_server_refuses_hostile_uploads(database_url: str, tmp_path: Path) -> None:
    """The incident: 2,040 members of exactly 1 MiB in a 2.3 MB zip, refused naming the
    archive and the limit; chunked oversize bodies get 413 from the server's own stream
    handling; ``/health`` still answers after them."""
    bomb = zip_of_copies([f"~r{i}.jsonl" for i in range(2040)], b"\n" * MiB)
    assert len(bomb) < 3 * MiB
    with (
        run_server(database_url, tmp_path, max_upload_bytes=4 * MiB) as server,
        server.client() as client,
    ):
        venue = f"hostile-{uuid.uuid4().hex[:8]}"
        assert client.post("/venues", json={"id": venue}).status_code == 201
        response = client.post(
            f"/venues/{venue}/reviewers/upload", files={"file": ("bomb.zip", bomb)}
        )
        assert response.status_code == 422, response.text
        first = response.json()["problems"][0]
        assert first["file"] == "bomb.zip" and "at most" in first["message"], first
        assert client.get("/health").status_code == 200
        assert client.get(f"/venues/{venue}/reviewers").json()["total"] == 0

        for path, content_type in (
            (f"/venues/{venue}/reviewers/upload", "multipart/form-data; boundary=bound"),
            (f"/venues/{venue}/submissions", "application/json"),
        ):
            response = client.post(
                path,
                content=_chunked_multipart(8 * MiB),
                headers={"content-type": content_type},
            )
            assert response.status_code == 413, response.text
            assert str(4 * MiB) in response.text or "upload limit" in response.text
        assert client.get("/health").status_code == 200
        assert client.get(f"/venues/{venue}/reviewers").json()["total"] == 0
