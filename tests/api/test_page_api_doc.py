"""docs/page-api.md is what tools/page_api_doc.py writes from the OpenAPI spec, and every
request the chair page sends is a route of that spec."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "page_api_doc", ROOT / "tools" / "page_api_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


doc = _load_tool()


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return dict(doc.openapi_spec())


def test_committed_document_is_what_the_script_writes(openapi: dict[str, Any]) -> None:
    committed = (ROOT / "docs" / "page-api.md").read_text(encoding="utf-8")
    assert committed == doc.render(openapi), (
        "docs/page-api.md is out of date: run python tools/page_api_doc.py"
    )


def test_every_request_of_the_page_is_a_route_of_the_spec(openapi: dict[str, Any]) -> None:
    calls, unused = doc.page_calls()
    assert unused == [], f"endpoints.js entries the page never calls: {unused}"
    routes, missing = doc.page_routes(openapi, calls)
    assert missing == [], f"the page calls routes the OpenAPI spec lacks: {missing}"
    found = {(route.method, route.path) for route in routes}
    run = "/venues/{venue_id}/assignments/{assignment_id}"
    for expected in [
        ("GET", "/me"),
        ("POST", "/venues"),
        ("GET", "/venues"),
        ("POST", f"{run}/edits"),  # api.post(EP.edits(...))
        ("GET", f"{run}/edits"),  # api.page(EP.edits(...))
        ("GET", f"{run}/stats"),  # api.get(EP.assignmentStats(...), {...})
        ("POST", f"{run}/bulk/apply"),  # api.request("POST", EP.bulkApply(...))
        ("DELETE", "/venues/{venue_id}/pins/{paper_id}/{reviewer_id}"),  # in a ternary
        ("POST", "/venues/{venue_id}/assignments/live/reassign"),  # a literal, not a run id
        ("PUT", "/venues/{venue_id}/reviewer-max-loads/{reviewer_id}"),
    ]:
        assert expected in found, expected
    uploads = {path for method, path in found if method == "POST" and path.endswith("/upload")}
    # one per upload form of the Data tab, and the Compute tab's scores upload
    assert len(uploads) == 7, uploads
    assert "/venues/{venue_id}/affinity/upload" in uploads
    assert len(found) >= 60


def test_a_request_the_spec_lacks_fails_the_document(
    openapi: dict[str, Any], tmp_path: Path
) -> None:
    static = tmp_path / "static"
    shutil.copytree(ROOT / "api" / "static", static)
    endpoints = static / "core" / "endpoints.js"
    source = endpoints.read_text(encoding="utf-8")
    endpoints.write_text(source.replace("`${V(v)}/pins`", "`${V(v)}/pinz`"), encoding="utf-8")
    with pytest.raises(doc.PageApiError, match=r"lacks: GET /venues/\{\}/pinz \(EP\.pins"):
        doc.render(openapi, static)

    endpoints.write_text(
        source.replace("  audit:", "  unused: (v) => `${V(v)}/unused`,\n  audit:"), encoding="utf-8"
    )
    with pytest.raises(doc.PageApiError, match=r"never calls: EP\.unused"):
        doc.render(openapi, static)

    endpoints.write_text(source, encoding="utf-8")
    view = static / "views" / "audit.js"
    view.write_text(view.read_text(encoding="utf-8") + "\nconst lost = [EP.me()];\n")
    with pytest.raises(doc.PageApiError, match=r"audit\.js:\d+: cannot tell which method"):
        doc.render(openapi, static)


def test_the_error_codes_listed_are_codes_the_service_sends() -> None:
    intro = doc.INTRO.read_text(encoding="utf-8")
    codes = doc.intro_codes(intro)
    assert "would_overfill" in codes and "stale_version" in codes and len(codes) > 25
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in ("api", "reviewer_recommender")
        for path in (ROOT / folder).rglob("*.py")
    )
    quoted = set(re.findall(r"[\"']([a-z_]+)[\"']", sources))
    assert [code for code in codes if code not in quoted] == []
