"""The chair page on the bundled sample (76 papers x 27 reviewers) and on a generated 200-paper
venue with 80 named reviewers (600 assigned pairs): names and search, every pair reachable,
one-click alternates, bulk change preview, pair-level compare, statistics with quota editing,
deploy with per-item overrides, moving progress. Most tests run on both data sets; venues are
prepared through the API (fast) and the page is judged on what it shows."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from live_server import LiveServer

from .e2e_support import (
    api_get,
    api_post,
    deploy,
    new_venue_id,
    prepare_venue,
    screenshot,
    solve_run,
)
from .e2e_support import (
    upload as api_upload,
)
from .page_actions import (
    JOB_TIMEOUT_MS,
    assert_console_clean,
    dialog,
    expect,
    open_tab,
    pick,
    run_select,
    sign_in,
    wait_for_job,
)

pytestmark = pytest.mark.e2e

# the loads that fit: 76 x 3 = 228 reviews for 27 reviewers, 200 x 3 = 600 for 80
MAX_LOAD = {"sample": 10, "venue200": 8}


def _files(name: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    return request.getfixturevalue("sample_files" if name == "sample" else "venue200_data")


def _solve(name: str) -> dict[str, Any]:
    return {"reviewers_per_paper": 3, "max_load": MAX_LOAD[name], "solver": "flow"}


@pytest.fixture(params=["sample", "venue200"])
def dataset(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The bundled sample or the generated 200-paper venue: files and a solve that fits."""
    return {
        "name": request.param,
        "files": _files(request.param, request),
        "solve": _solve(request.param),
    }


@pytest.fixture(scope="module", params=["sample", "venue200"])
def two_runs(request: pytest.FixtureRequest, live_server: LiveServer) -> Iterator[dict[str, Any]]:
    """A shared venue with two runs (read-only tests): A (max total) and B (fairness, one
    more paper allowed per reviewer, named), B newer."""
    solve = _solve(request.param)
    venue_id, run_a = prepare_venue(
        live_server,
        _files(request.param, request),
        name=f"Venue {request.param}",
        solve={**solve, "name": "max total"},
    )
    assert run_a is not None
    run_b = solve_run(
        live_server,
        venue_id,
        {
            **solve,
            "solver": "auto",
            "max_load": solve["max_load"] + 1,
            "fairness_keep": 1,
            "name": "fair",
        },
    )
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    yield {"venue_id": venue_id, "a": run_a, "b": run_b, "chair": chair, "name": request.param}


def _own_venue(live_server: LiveServer, dataset: dict[str, Any]) -> tuple[str, int, str]:
    venue_id, run = prepare_venue(live_server, dataset["files"], solve=dataset["solve"])
    assert run is not None
    return venue_id, run, live_server.token("chair", venue_id, f"chair@{venue_id}")


def _load(server: LiveServer, venue_id: str, run: int, reviewer_id: str) -> tuple[int, int]:
    """A reviewer's load and max load in a run (from the edge browser's API)."""
    reviewer = api_get(
        server, f"/venues/{venue_id}/assignments/{run}/reviewers/{reviewer_id}/edges", limit=1
    )["reviewer"]
    return reviewer["load"], reviewer["max_load"]


@pytest.mark.parametrize("two_runs", ["venue200"], indirect=True)
def test_names_search_and_every_pair_reachable(
    page: Any, live_server: LiveServer, two_runs: dict[str, Any], console_errors: list[str]
) -> None:
    venue200 = two_runs
    venue_id = venue200["venue_id"]
    sign_in(page, venue200["chair"])
    open_tab(page, "Assignment")
    pairs = page.get_by_role("table", name="Assigned pairs")
    # reviewers by name, papers by title (ids under them)
    first_pair = api_get(
        live_server, f"/venues/{venue_id}/assignments/{venue200['b']}/pairs", limit=1
    )["items"][0]
    reviewer = api_get(live_server, f"/venues/{venue_id}/reviewers/{first_pair['reviewer_id']}")
    expect(pairs.locator("tbody tr").first).to_contain_text(reviewer["name"])
    expect(page.get_by_text("Pairs 1–50 of 600")).to_be_visible()

    # every pair reachable: 250 a page, three pages
    page.get_by_label("Rows per page of Assigned pairs").select_option("250")
    seen: set[tuple[str, str]] = set()
    for expected_range in ("Pairs 1–250 of 600", "Pairs 251–500 of 600", "Pairs 501–600 of 600"):
        expect(page.get_by_text(expected_range)).to_be_visible()
        rows = pairs.locator("tbody tr")
        texts = rows.evaluate_all(
            "rows => rows.map((r) => [...r.querySelectorAll('.id')].map((e) => e.textContent))"
        )
        seen.update((paper, person) for paper, person in texts)
        if expected_range.endswith("600 of 600"):
            break
        page.get_by_role("button", name="Next page of Assigned pairs").click()
    assert len(seen) == 600

    # type-ahead search: accents folded, a title by two of its words (its speed:
    # benchmarks/bench_search.py)
    open_tab(page, "Papers and reviewers")
    box = page.get_by_role("combobox", name="Reviewer")
    box.fill("muller")
    option = page.get_by_role("listbox", name="Reviewer suggestions").get_by_role("option").first
    expect(option).to_contain_text("Müller")
    option.click()
    reviewer_view = page.get_by_test_id("reviewer-view")
    expect(reviewer_view.get_by_test_id("reviewer-load")).to_contain_text("load")
    papers_table = page.get_by_role("table", name="Papers of the reviewer")
    expect(papers_table.locator("tr.assigned-row").first).to_be_visible()
    title = api_get(live_server, f"/venues/{venue_id}/submissions/v200-010")["title"]
    pick(page, "Paper", " ".join(title.split()[1:3]), re.compile(re.escape(title[:30])))
    expect(page.get_by_test_id("paper-view")).to_contain_text("v200-010")
    screenshot(page, "08-edge-browser-reviewer-names")
    assert_console_clean(console_errors)


def test_compare_runs_pair_by_pair(
    page: Any, live_server: LiveServer, two_runs: dict[str, Any], console_errors: list[str]
) -> None:
    venue200 = two_runs
    venue_id, a, b = venue200["venue_id"], venue200["a"], venue200["b"]
    summary = api_get(live_server, f"/venues/{venue_id}/assignments/{a}/compare/{b}")
    assert summary["added"] > 0
    sign_in(page, venue200["chair"])
    open_tab(page, "Compare runs")
    page.get_by_label("Run A (base)").select_option(str(a))
    page.get_by_label("Run B").select_option(str(b))
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("compare-added")).to_contain_text(str(summary["added"]))
    expect(page.get_by_test_id("compare-removed")).to_contain_text(str(summary["removed"]))
    changed = page.get_by_role("table", name="Changed pairs")
    expect(changed.locator("tbody tr").first).to_contain_text(re.compile("added|removed"))
    page.get_by_label("Show", exact=True).select_option("removed")
    expect(changed.locator("tbody tr").first).to_contain_text("removed")
    per_paper = page.get_by_role("table", name="Papers whose reviewers changed")
    expect(per_paper.locator("tbody tr").first).to_contain_text(re.compile("[+−] "))
    expect(page.get_by_role("table", name="Reviewers whose papers changed")).to_contain_text("→")
    if two_runs["name"] == "venue200":
        screenshot(page, "09-compare-pairs")
    assert_console_clean(console_errors)


def test_live_run_shown_by_default_to_chairs_and_viewers(
    page: Any, live_server: LiveServer, dataset: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, first = prepare_venue(
        live_server, dataset["files"], solve={**dataset["solve"], "name": "v1"}
    )
    assert first is not None
    deploy(live_server, venue_id, first)
    newer = solve_run(live_server, venue_id, {**dataset["solve"], "reviewers_per_paper": 2})
    total = api_get(live_server, f"/venues/{venue_id}/assignments/{first}/pairs", limit=1)["total"]
    assert newer > first

    # a chair sees the live run by default, not the newer draft
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    expect(page.get_by_test_id("run-state")).to_have_text("live")
    expect(run_select(page).locator("option:checked")).to_contain_text("“v1”")
    expect(page.locator("#run-hint")).to_contain_text("This is the live run")

    # a viewer too, read-only, with names and every pair reachable
    viewer = live_server.token("viewer", venue_id, f"viewer@{venue_id}")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, viewer)
    expect(page.get_by_test_id("whoami")).to_contain_text("(viewer of")
    expect(page.get_by_role("tab", name="Assignment")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    expect(run_select(page).locator("option")).to_have_count(1)
    expect(page.get_by_text(f"Pairs 1–50 of {total}")).to_be_visible()
    for name in ("Deploy", "Re-solve (keeps pins)", "Undo last edit"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    edit_buttons = page.get_by_role("button", name=re.compile("^(Remove|Pin|Forbid|Assign): "))
    expect(edit_buttons).to_have_count(0)
    expect(page.get_by_role("button", name="Export CSV")).to_be_visible()
    open_tab(page, "Papers and reviewers")
    pick(page, "Reviewer", "")
    expect(page.get_by_role("table", name="Papers of the reviewer")).to_be_visible()
    expect(page.get_by_role("button", name="Assign")).to_have_count(0)
    # a viewer has no chair tabs (Data, Compute, …): nothing to upload, compute or solve
    expect(page.get_by_role("tab", name="Compute")).to_be_hidden()
    expect(page.get_by_role("button", name="Solve assignment")).to_be_hidden()
    open_tab(page, "Statistics")
    expect(page.get_by_role("table", name="Reviewers by load")).to_be_visible()
    expect(page.get_by_role("table", name="Conflicts of interest")).to_have_count(0)
    open_tab(page, "Assignment")
    expect(page.get_by_text(f"Pairs 1–50 of {total}")).to_be_visible()
    expect(page.get_by_test_id("load-histogram").locator("rect.bar").first).to_be_attached()
    if dataset["name"] == "venue200":
        screenshot(page, "11-viewer-live-run")
    assert_console_clean(console_errors)


def test_one_click_assign_from_candidates_and_alternates(
    page: Any, live_server: LiveServer, dataset: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run, chair = _own_venue(live_server, dataset)
    base = f"/venues/{venue_id}/assignments/{run}"
    first, second = api_get(live_server, f"{base}/pairs", limit=4)["items"][::3][:2]
    # leave a paper one reviewer short, its reviewer one paper under quota
    load, most = _load(live_server, venue_id, run, first["reviewer_id"])
    api_post(live_server, f"{base}/edits", {"action": "remove", **_pair(first)})
    sign_in(page, chair)

    # the reviewer's side: the paper is a candidate, Assign is one click (previewed)
    open_tab(page, "Papers and reviewers")
    name = first["reviewer_name"]
    pick(page, "Reviewer", name.split()[-1], re.compile(re.escape(name)))
    expect(page.get_by_test_id("reviewer-load")).to_contain_text(f"load {load - 1} / {most}")
    page.get_by_label("Show", exact=True).select_option("candidates")
    page.get_by_label("Rows per page of Papers of the reviewer").select_option("250")
    candidates = page.get_by_role("table", name="Papers of the reviewer")
    row = candidates.locator("tbody tr", has_text=first["paper_title"][:40])
    row.get_by_role("button", name=re.compile("^Assign: ")).click()
    preview = dialog(page, re.compile(f"^Assign {re.escape(name)} to "))
    expect(preview.get_by_test_id("score-change")).to_contain_text("(+")
    expect(preview).to_contain_text(f"{load - 1} → {load}")
    preview.get_by_role("button", name="Apply: Assign").click()
    expect(preview).to_be_hidden()
    expect(page.get_by_test_id("reviewer-load")).to_contain_text(f"load {load} / {most}")

    # the paper's side: a paper below demand, listed under Statistics, its alternates one
    # click away
    api_post(live_server, f"{base}/edits", {"action": "remove", **_pair(second)})
    open_tab(page, "Statistics")
    below = page.get_by_role("table", name="Papers below demand")
    expect(below.locator("tbody tr")).to_have_count(1)
    title = api_get(live_server, f"/venues/{venue_id}/submissions/{second['paper_id']}")["title"]
    below.get_by_role("button", name=title[:20]).click()
    expect(page.get_by_role("tab", name="Papers and reviewers")).to_have_attribute(
        "aria-selected", "true"
    )
    coverage = page.get_by_test_id("paper-coverage")
    expect(coverage).to_contain_text("2 of 3 reviewers")
    alternates = page.get_by_test_id("alternates")
    alternates.get_by_role("button", name=re.compile("^Assign alternate")).first.click()
    preview = dialog(page, re.compile("^Assign "))
    expect(preview.get_by_test_id("score-change")).to_contain_text("(+")
    preview.get_by_role("button", name="Apply: Assign").click()
    expect(coverage).to_contain_text("3 of 3 reviewers")
    assert_console_clean(console_errors)


def _pair(pair: dict[str, Any]) -> dict[str, str]:
    return {"paper_id": pair["paper_id"], "reviewer_id": pair["reviewer_id"]}


def test_bulk_change_preview_then_apply_then_undo(
    page: Any,
    live_server: LiveServer,
    dataset: dict[str, Any],
    console_errors: list[str],
    tmp_path: Any,
) -> None:
    venue_id, run, chair = _own_venue(live_server, dataset)
    base = f"/venues/{venue_id}/assignments/{run}"
    pairs = api_get(live_server, f"{base}/pairs", limit=10)["items"]
    out = pairs[0]
    edges = api_get(
        live_server, f"{base}/papers/{out['paper_id']}/edges", filter="candidates", limit=50
    )
    # a reviewer with room, not in conflict: the file removes one reviewer and adds this one
    candidate = next(
        e
        for e in edges["items"]
        if not e["conflict"] and e["reviewer_load"] < e["reviewer_max_load"]
    )
    bad = tmp_path / "bulk-bad.csv"
    bad.write_text(
        "paper_id,reviewer_id,action\n"
        f"{out['paper_id']},{out['reviewer_id']},remove\n"
        f"no-such-paper,{out['reviewer_id']},add\n",
        encoding="utf-8",
    )
    good = tmp_path / "bulk-good.csv"
    good.write_text(
        "paper_id,reviewer_id,action\n"
        f"{out['paper_id']},{out['reviewer_id']},remove\n"
        f"{out['paper_id']},{candidate['reviewer_id']},add\n",
        encoding="utf-8",
    )
    sign_in(page, chair)
    open_tab(page, "Assignment")
    page.get_by_label("Bulk change file").set_input_files(str(bad))
    page.get_by_role("button", name="Preview changes").click()
    errors = page.get_by_test_id("bulk-errors")
    expect(errors).to_contain_text("no-such-paper")
    expect(errors).to_contain_text("3")  # the line
    # HotCRP style: the bad line is skipped, the valid remove still previewed and applicable
    expect(page.get_by_test_id("bulk-counts")).to_contain_text("2 rows — 1 to apply, 1 skipped")
    expect(page.get_by_role("table", name="Removals in bulk-bad.csv")).to_contain_text(
        out["reviewer_name"]
    )
    expect(page.get_by_test_id("bulk-apply")).to_have_count(1)

    page.get_by_label("Bulk change file").set_input_files(str(good))
    page.get_by_role("button", name="Preview changes").click()
    counts = page.get_by_test_id("bulk-counts")
    expect(counts).to_contain_text("1 addition, 1 removal")
    expect(page.get_by_role("table", name="Additions in bulk-good.csv")).to_contain_text(
        candidate["reviewer_name"]
    )
    expect(page.get_by_role("table", name="Removals in bulk-good.csv")).to_contain_text(
        out["reviewer_name"]
    )
    expect(page.get_by_test_id("bulk-preview").get_by_test_id("score-change")).to_be_visible()
    if dataset["name"] == "venue200":
        screenshot(page, "10-bulk-preview")
    # nothing changed before applying
    assert api_get(live_server, base)["version"] == 1
    page.get_by_role("button", name="Apply bulk-good.csv").click()
    expect(page.get_by_test_id("draft-version")).to_contain_text("Version 2")
    history = page.get_by_role("table", name="Edit history")
    expect(history).to_contain_text("bulk-good.csv")
    assigned = {
        p["reviewer_id"]
        for p in api_get(live_server, f"{base}/pairs", paper_id=out["paper_id"])["items"]
    }
    assert candidate["reviewer_id"] in assigned and out["reviewer_id"] not in assigned
    page.get_by_role("button", name="Undo last edit").click()
    expect(page.get_by_test_id("draft-version")).to_contain_text("Version 3")
    assigned = {
        p["reviewer_id"]
        for p in api_get(live_server, f"{base}/pairs", paper_id=out["paper_id"])["items"]
    }
    assert out["reviewer_id"] in assigned and candidate["reviewer_id"] not in assigned
    assert_console_clean(console_errors)


def test_statistics_conflicts_bids_and_quota_editing(
    page: Any, live_server: LiveServer, dataset: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id = new_venue_id()
    # bids and a conflict before scoring and solving
    prepare = prepare_venue(live_server, dataset["files"], venue_id=venue_id)
    assert prepare[1] is None
    people = api_get(live_server, f"/venues/{venue_id}/reviewers", limit=5)["items"]
    reviewers = [p["id"] for p in people]
    papers = [
        p["id"] for p in api_get(live_server, f"/venues/{venue_id}/submissions", limit=6)["items"]
    ]
    with live_server.client() as client:
        bids = "paper_id,reviewer_id,bid\n" + "".join(
            f"{papers[k]},{reviewers[k % 5]},{label}\n"
            for k, label in ((1, "High"), (2, "Very High"), (3, "Not Willing"), (4, "Low"))
        )
        api_upload(client, venue_id, "bids", "bids.csv", bids.encode())
        conflict = f"paper_id,reviewer_id,value\n{papers[5]},{reviewers[0]},-1\n"
        api_upload(client, venue_id, "constraints", "conflicts.csv", conflict.encode())
    solve_run(live_server, venue_id, dataset["solve"])
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Statistics")
    conflicts = page.get_by_role("table", name="Conflicts of interest")
    expect(conflicts).to_contain_text(people[0]["name"] or people[0]["id"])
    page.get_by_label("Source").select_option("uploaded")
    expect(conflicts.locator("tbody tr")).to_have_count(1)
    bids_table = page.get_by_role("table", name="Assignments by bid value")
    expect(bids_table).to_contain_text("Very High")
    expect(bids_table).to_contain_text("no bid")
    expect(page.get_by_test_id("pair-score-histogram").locator("rect.bar").first).to_be_attached()
    expect(page.get_by_role("table", name="Papers below demand")).to_contain_text(
        "Every paper has the reviewers it needs"
    )
    # quota editing inline: stored, counted by the capacity check
    loads = page.get_by_role("table", name="Reviewers by load")
    first_row = loads.locator("tbody tr").first
    name = first_row.locator(".person button").inner_text()
    quota = page.get_by_role("textbox", name=f"Quota of {name}")
    quota.fill("2")
    quota.press("Enter")
    expect(page.get_by_test_id("toast").last).to_contain_text("quota 2 stored")
    stored = api_get(live_server, f"/venues/{venue_id}/reviewer-max-loads")["items"]
    assert [s["max_load"] for s in stored] == [2]
    expect(page.get_by_role("textbox", name=f"Quota of {name}")).to_have_value("2")
    if dataset["name"] == "venue200":
        screenshot(page, "14-statistics")
    open_tab(page, "Compute")
    expect(page.get_by_test_id("capacity-check")).to_contain_text("1 stored reviewer quota")
    assert_console_clean(console_errors)


def test_deploy_lists_violations_with_per_item_override(
    page: Any, live_server: LiveServer, dataset: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run, chair = _own_venue(live_server, dataset)
    pair = api_get(live_server, f"/venues/{venue_id}/assignments/{run}/pairs", limit=1)["items"][0]
    with live_server.client() as client:
        conflict = f"paper_id,reviewer_id,value\n{pair['paper_id']},{pair['reviewer_id']},-1\n"
        api_upload(client, venue_id, "constraints", "late-conflict.csv", conflict.encode())
    sign_in(page, chair)
    open_tab(page, "Assignment")
    page.get_by_test_id("run-card").get_by_role("button", name="Deploy").click()
    confirm = dialog(page, re.compile(r"^Deploy Run #1 \(version 1\)\?"))
    violations = confirm.get_by_role("table", name="Broken constraints")
    expect(violations.locator("tbody tr")).to_have_count(1)
    expect(violations).to_contain_text("conflict of interest")
    expect(violations).to_contain_text(pair["reviewer_name"])
    confirm.get_by_role("button", name="Deploy Run #1").click()
    expect(confirm).to_contain_text("1 listed item is not overridden")
    confirm.get_by_role("textbox", name=re.compile("^Reason for overriding")).fill(
        "known co-author, agreed with the PC chairs"
    )
    if dataset["name"] == "venue200":
        screenshot(page, "15-deploy-violations", full_page=False)
    confirm.get_by_role("button", name="Deploy Run #1").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    open_tab(page, "Audit log")
    expect(page.get_by_role("table", name="Audit log")).to_contain_text("assignment.deploy")
    assert_console_clean(console_errors)


def test_progress_bar_moves(
    page: Any, live_server: LiveServer, venue200_data: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id = new_venue_id()
    # Texts of this run only: none is in the server's embedding cache (other tests, or the
    # demo, embed the same sample), so the job embeds every one of them and its bar follows
    # the texts embedded, reported every few seconds.
    marker = f" (progress run {venue_id})"
    with live_server.client() as client:
        assert client.post("/venues", json={"id": venue_id}).status_code == 201
        for kind in ("reviewers", "submissions"):
            path = venue200_data[kind]
            items = json.loads(path.read_text(encoding="utf-8"))
            for item in items:
                for text in item.get("publications", [item]):
                    text["abstract"] = text.get("abstract", "") + marker
            api_upload(client, venue_id, kind, path.name, json.dumps(items).encode("utf-8"))
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Compute")
    # every value the bar shows, as the page updates it
    page.evaluate(
        """() => {
          window.progressSeen = [];
          new MutationObserver(() => {
            for (const bar of document.querySelectorAll('#job-list progress')) {
              window.progressSeen.push(Number(bar.value));
            }
          }).observe(document.querySelector('#job-list'),
                     { attributes: true, subtree: true, childList: true, characterData: true });
        }"""
    )
    page.get_by_label("Method").select_option("combined")
    page.get_by_role("button", name="Compute affinity").click()
    # 200 papers and 400 publications on a cold cache: tens of seconds to minutes on a loaded
    # 2-core machine, and the test is about the bar moving, not about speed
    card = wait_for_job(page, "affinity", timeout_ms=6 * JOB_TIMEOUT_MS)
    expect(card.get_by_role("progressbar")).to_have_attribute("value", "100")
    seen = page.evaluate("window.progressSeen")
    distinct = sorted(set(seen))
    assert len([v for v in distinct if 0 < v < 100]) >= 2, distinct
    assert distinct[-1] == 100
    expect(card).to_contain_text("Log (")
    card.get_by_text(re.compile(r"^Log \(")).click()
    expect(card.get_by_role("list", name=re.compile("^Log of"))).to_be_visible()
    screenshot(page, "16-job-progress-log", full_page=False)
    assert_console_clean(console_errors)
