"""The chair page's assignment modes: a perturbed-maximization solve from the Compute form
and its randomness table beside the deterministic optimum (the bundled sample, 76 papers x
27 reviewers), and an emergency re-assignment of the live run (reviewers who withdrew) whose
draft shows what changed, lifts the withdrawn reviewer's venue pin as its own rule, and is
published through the usual deploy (the sample, and the
generated 200-paper venue with 80 named reviewers)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from live_server import LiveServer

from .e2e_support import api_get, deploy, prepare_venue, screenshot, upload
from .page_actions import (
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

SOLVE = {"reviewers_per_paper": 3, "max_load": 10, "solver": "flow"}
METRICS = 6  # quality ratio, max and average-max probability, L2 norm, entropy, support size


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def test_perturbed_solve_shows_its_randomness_beside_the_deterministic_optimum(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, _ = prepare_venue(live_server, sample_files)
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Compute")
    form = page.locator("#assignment-form")
    errors = form.get_by_role("alert")
    beta = page.get_by_label("Perturbation β (perturbed)")
    cap = page.get_by_label("Max probability of a pair")
    # the β field is used by the perturbed solver only; the cap by the randomized ones
    expect(beta).to_be_disabled()
    expect(cap).to_be_disabled()
    # the service's solve defaults arrive first (the capacity check then shows)
    expect(page.get_by_test_id("capacity-check")).to_contain_text("Capacity check")
    page.get_by_label("Max papers per reviewer").fill("10")
    page.get_by_label("Solver").select_option("perturbed")
    expect(beta).to_be_enabled()
    expect(cap).to_have_value("")  # no cap unless the chair sets one

    # combinations the service refuses are explained in the form, nothing is sent
    beta.fill("0")
    page.get_by_role("button", name="Solve assignment").click()
    expect(errors).to_contain_text("perturbation β above 0 and at most 1")
    beta.fill("0.2")
    page.get_by_label("Objective").select_option("fairness")
    page.get_by_role("button", name="Solve assignment").click()
    expect(errors).to_contain_text("perturbed solver cannot enforce fairness")
    page.get_by_label("Objective").select_option("max_total")
    # the service's own refusals show in the same box
    page.get_by_label("Seed").fill("99999999999")
    page.get_by_role("button", name="Solve assignment").click()
    expect(errors).to_contain_text("seed")
    page.get_by_label("Seed").fill("7")

    page.get_by_label("Run name").fill("perturbed 0.2")
    page.get_by_role("button", name="Solve assignment").click()
    expect(errors).to_be_hidden()
    wait_for_job(page, "assignment")
    expect(run_select(page).locator("option:checked")).to_contain_text("“perturbed 0.2”")
    runs = api_get(live_server, f"/venues/{venue_id}/assignments")["items"]
    assert len(runs) == 1
    assert runs[0]["parameters"]["solver"] == "perturbed"
    assert runs[0]["parameters"]["perturbation"] == 0.2
    assert runs[0]["parameters"].get("probability_cap") is None
    assert runs[0]["parameters"]["max_load"] == 10

    open_tab(page, "Assignment")
    expect(page.get_by_test_id("run-card")).to_contain_text(
        "solver perturbed, perturbation beta 0.2"
    )
    table = page.get_by_role("table", name=re.compile(r"^Randomness of Run #1 “perturbed 0\.2”"))
    expect(table.locator("thead th")).to_have_text(["Metric", "this run", "deterministic optimum"])
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(METRICS)
    quality = table.locator('tr[data-metric="quality_ratio"]')
    expect(quality.get_by_role("rowheader")).to_contain_text("Quality")
    this_run, optimum = (_number(t) for t in quality.locator("td").all_inner_texts())
    assert 0.8 <= this_run <= 1.0
    assert optimum == 1.0
    for row in rows.all():
        cells = row.locator("td").all_inner_texts()
        assert len(cells) == 2 and all(re.fullmatch(r"[\d.,e−-]+", c) for c in cells), cells
    # the page shows what the service measured
    answer = api_get(live_server, f"/venues/{venue_id}/assignments/{runs[0]['id']}/randomness")
    measured = {m["name"]: m for m in answer["metrics"]}
    assert abs(measured["quality_ratio"]["randomized"] - this_run) < 1e-3
    support = table.locator('tr[data-metric="support_size"] td').first
    expect(support).to_have_text(re.compile(r"^[\d,]+$"))
    table.scroll_into_view_if_needed()
    screenshot(page, "17-randomness", full_page=False)
    assert_console_clean(console_errors, "HTTP 422 POST")  # the refused seed, on purpose


def test_deterministic_run_has_a_quiet_randomness_line(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run = prepare_venue(live_server, sample_files, solve=SOLVE)
    assert run is not None
    sign_in(page, live_server.token("chair", venue_id, f"chair@{venue_id}"))
    open_tab(page, "Assignment")
    note = page.get_by_test_id("randomness-note")
    expect(note).to_have_text(
        "Solved deterministically (min-cost flow): every pair is certain, no randomness to show."
    )
    expect(page.get_by_test_id("randomness-table")).to_have_count(0)
    # a draft offers no re-assignment: only the live run does
    expect(page.get_by_role("button", name="Create re-assignment draft")).to_have_count(0)
    assert_console_clean(console_errors)


@pytest.mark.parametrize("dataset", ["sample", "venue200"])
def test_withdrawn_reviewer_is_reassigned_then_deployed(
    page: Any,
    live_server: LiveServer,
    dataset: str,
    request: pytest.FixtureRequest,
    console_errors: list[str],
) -> None:
    files = request.getfixturevalue("sample_files" if dataset == "sample" else "venue200_data")
    solve = {**SOLVE, "max_load": 10 if dataset == "sample" else 8, "name": "v1"}
    venue_id, live = prepare_venue(live_server, files, solve=solve)
    assert live is not None
    deploy(live_server, venue_id, live)
    base = f"/venues/{venue_id}/assignments/{live}"
    pairs = api_get(live_server, f"{base}/pairs", limit=1000)["items"]
    gone = pairs[0]["reviewer_id"]
    name = pairs[0]["reviewer_name"]
    theirs = {p["paper_id"] for p in pairs if p["reviewer_id"] == gone}
    assert theirs
    # a venue pin of theirs: the re-assignment lifts it in its draft (its check stays clean)
    pinned = sorted(theirs)[0]
    with live_server.client() as client:
        upload(
            client,
            venue_id,
            "constraints",
            "pins.csv",
            f"paper_id,reviewer_id,value\n{pinned},{gone},1\n".encode(),
        )

    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Assignment")
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    card = page.get_by_test_id("reassign")
    expect(card.get_by_role("heading", name="Emergency re-assignment")).to_be_visible()
    # nothing chosen: said in the form, nothing sent
    card.get_by_role("button", name="Create re-assignment draft").click()
    expect(card.get_by_role("alert")).to_contain_text("Choose at least one reviewer")
    pick(page, "Add a reviewer who withdrew", name.split()[-1], re.compile(re.escape(name)))
    withdrawn = card.get_by_role("list", name="Reviewers who withdrew")
    expect(withdrawn).to_contain_text(name)
    card.get_by_label("Reason for the re-assignment").fill("withdrew after the deadline")
    card.scroll_into_view_if_needed()
    card.get_by_role("button", name="Create re-assignment draft").click()

    # the new draft is selected and says what changed, with names and titles
    expect(page.get_by_test_id("assignment-state")).to_have_text("draft")
    runs = api_get(live_server, f"/venues/{venue_id}/assignments")["items"]
    draft = max(r["id"] for r in runs)
    assert [r["number"] for r in runs if r["id"] == draft] == [2]
    expect(run_select(page).locator("option:checked")).to_contain_text("Run #2 · draft")
    expect(page.get_by_test_id("run-card")).to_contain_text("re-assignment of #1 (version 1)")
    changes = page.get_by_role("table", name="Changes against Run #1 “v1”")
    removed = changes.locator("tbody tr", has_text="the reviewer withdrew")
    expect(removed).to_have_count(len(theirs))
    expect(removed.first).to_contain_text(name)
    expect(removed.first).to_contain_text("removed")
    added = changes.locator("tbody tr", has_text="fills a vacated slot")
    expect(added).to_have_count(len(theirs))
    expect(added.first).to_contain_text("added")
    title = api_get(live_server, f"/venues/{venue_id}/submissions/{sorted(theirs)[0]}")["title"]
    expect(changes).to_contain_text(title[:30])
    expect(page.get_by_test_id("reassign-counts")).to_contain_text(
        f"{len(pairs) - len(theirs)} live pairs kept, {len(theirs)} pair"
    )
    # its own rules: the reviewer's quota 0 and the venue pin lifted, in this draft only
    own = page.get_by_role("table", name="This run's own rules")
    expect(own.locator("tbody tr")).to_have_count(2)
    lifted = own.locator("tbody tr", has_text="Venue pin lifted")
    expect(lifted).to_contain_text("reviewer withdrawn by the re-assignment")
    expect(lifted).to_contain_text(name)
    assert api_get(live_server, f"/venues/{venue_id}/pins")["total"] == 1
    # it ran as a job, followed like a solve: its card names the draft
    jobs = api_get(live_server, f"/venues/{venue_id}/jobs", kind="reassignment")["items"]
    assert [(j["state"], j["result"]["assignment_id"]) for j in jobs] == [("succeeded", draft)]
    job_card = wait_for_job(page, "reassignment")
    expect(job_card).to_contain_text("Re-assignment job")
    expect(job_card).to_contain_text("Created run #2")
    page.get_by_test_id("reassignment").scroll_into_view_if_needed()
    if dataset == "venue200":  # named reviewers
        screenshot(page, "18-reassignment", full_page=False)

    # published through the usual confirmation
    page.get_by_test_id("run-card").get_by_role("button", name="Deploy").click()
    confirm = dialog(page, "Deploy Run #2 (version 1)?")
    expect(confirm).to_contain_text("It replaces Run #1 “v1”")
    expect(confirm.get_by_test_id("no-violations")).to_be_visible()
    confirm.get_by_role("button", name="Deploy Run #2").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    now = api_get(live_server, f"/venues/{venue_id}/assignments/live")
    assert now["id"] == draft
    live_pairs = api_get(
        live_server, f"/venues/{venue_id}/assignments/{now['id']}/pairs", limit=1000
    )["items"]
    assert gone not in {p["reviewer_id"] for p in live_pairs}
    assert len(live_pairs) == len(pairs)

    # viewers never see the action
    viewer = live_server.token("viewer", venue_id, f"viewer@{venue_id}")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, viewer)
    expect(page.get_by_test_id("assignment-state")).to_have_text("live")
    expect(page.get_by_test_id("randomness-note")).to_be_visible()
    expect(page.get_by_role("button", name="Create re-assignment draft")).to_have_count(0)
    expect(page.get_by_test_id("reassignment")).to_have_count(0)
    assert_console_clean(console_errors)
