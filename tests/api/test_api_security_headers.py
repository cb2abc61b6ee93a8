"""Security headers on every kind of response (JSON, errors, the page and its static files,
a streamed export, 404, 413, a 500), the chair page's policy strict (no inline script or
style, no framing), and the OpenAPI docs page with a policy of its own that names its inline
script by hash. On SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

from api_helpers import load_venue
from conftest import Api, make_settings
from fastapi.testclient import TestClient

from api.app import create_app

HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def _directives(policy: str) -> dict[str, list[str]]:
    found = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            found[words[0]] = words[1:]
    return found


def _assert_page_headers(response: Any, what: str) -> None:
    for name, value in HEADERS.items():
        assert response.headers.get(name) == value, (what, name, response.headers)
    assert response.headers.get_list("content-security-policy") == [
        response.headers["content-security-policy"]
    ], what
    policy = _directives(response.headers["content-security-policy"])
    assert policy["default-src"] == ["'self'"], (what, policy)
    assert policy["frame-ancestors"] == ["'none'"], (what, policy)
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'none'"], what
    # nothing inline, nothing from elsewhere: the page's own files only
    for directive in ("script-src", "style-src", "img-src", "connect-src"):
        assert directive not in policy, (what, directive)
    assert "unsafe" not in response.headers["content-security-policy"], what


def test_every_kind_of_response_carries_the_security_headers(api: Api) -> None:
    venue, chair, _viewer = api.new_venue()
    load_venue(api, venue, chair)
    job = api.call(
        "POST", f"/venues/{venue}/assignments", chair, json={"reviewers_per_paper": 1}
    ).json()
    run = job["result"]["assignment_id"]
    limit = api.client.app.state.settings.max_upload_bytes
    answers = {
        "health": api.client.get("/health"),
        "json": api.call("GET", f"/venues/{venue}", chair),
        "page": api.client.get("/"),
        "static script": api.client.get("/static/app.js"),
        "static style": api.client.get("/static/app.css"),
        "csv export (streamed)": api.call(
            "GET", f"/venues/{venue}/assignments/{run}/export", chair
        ),
        "json export (streamed)": api.call(
            "GET", f"/venues/{venue}/assignments/{run}/export?format=json", chair
        ),
        "openapi": api.client.get("/openapi.json"),
        "401": api.client.get(f"/venues/{venue}"),
        "404 route": api.client.get("/no/such/route"),
        "404 static": api.client.get("/static/nothing.js"),
        "404 venue": api.call("GET", "/venues/no-such-venue", api.admin),
        "409": api.call(
            "POST",
            f"/venues/{venue}/assignments/{run}/deploy",
            chair,
            json={"assignment_id": run, "version": 99},
        ),
        "413": api.call(
            "POST",
            f"/venues/{venue}/submissions/upload",
            chair,
            files={"file": ("big.csv", b"id,title\n" + b"x" * (limit + 1), "text/csv")},
        ),
        "422": api.call("GET", f"/venues/{venue}/assignments/0", chair),
        "405": api.client.put("/health"),
    }
    expected = {
        "401": 401,
        "404 route": 404,
        "404 static": 404,
        "404 venue": 404,
        "409": 409,
        "413": 413,
        "422": 422,
        "405": 405,
    }
    for what, response in answers.items():
        assert response.status_code == expected.get(what, 200), (what, response.text[:300])
        _assert_page_headers(response, what)
    assert answers["csv export (streamed)"].headers["content-type"].startswith("text/csv")


def test_a_server_error_carries_the_security_headers(database_url: str, tmp_path: Path) -> None:
    app = create_app(make_settings(database_url, tmp_path))

    @app.get("/broken-on-purpose")
    def broken() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/broken-on-purpose")
    assert response.status_code == 500
    _assert_page_headers(response, "500")


def test_the_page_has_no_inline_script_style_or_handler() -> None:
    """What the page's policy refuses is not in the page: scripts and styles are files."""
    static = Path(__file__).resolve().parents[2] / "api" / "static"
    html = (static / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert not re.search(r"<style\b|\sstyle\s*=|\son[a-z]+\s*=", html, re.IGNORECASE)
    for script in static.rglob("*.js"):
        code = script.read_text(encoding="utf-8")
        assert not re.search(r"\.innerHTML\s*=|setAttribute\(\s*[\"']style", code), script
        assert not re.search(r"\beval\(|new Function\(", code), script


def test_the_docs_page_has_its_own_policy_naming_its_inline_script(api: Api) -> None:
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        response = api.client.get(path)
        assert response.status_code == 200, path
        for name, value in HEADERS.items():
            assert response.headers.get(name) == value, (path, name)
        policy = _directives(response.headers["content-security-policy"])
        assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]
        assert "'unsafe-inline'" not in policy["script-src"], path
        inline = re.findall(
            r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", response.text, re.DOTALL
        )
        hashes = {
            "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
            for s in inline
        }
        assert hashes <= set(policy["script-src"]), (path, hashes, policy["script-src"])
        if path == "/docs":
            assert inline and "https://cdn.jsdelivr.net" in policy["script-src"]
