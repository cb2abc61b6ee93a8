"""A draft's own rules in the chair page (issue 23, point 3): a swap stays in its draft, listed
under the Changes card, until the chair promotes it to venue rules with the Promote button.
On the bundled sample; the venue is prepared through the API."""

from __future__ import annotations

import re
from typing import Any

import pytest
from live_server import LiveServer
from tight_venue import PARAMS, REVIEWERS, SUBMISSIONS

from .e2e_support import api_get, api_post, new_venue_id, prepare_venue, solve_run, wait_job
from .page_actions import assert_console_clean, dialog, expect, open_tab, pick, sign_in

pytestmark = pytest.mark.e2e

SOLVE = {"reviewers_per_paper": 3, "max_load": 10, "solver": "flow"}


def _swap(server: LiveServer, venue_id: str, run: int) -> tuple[str, str, str]:
    """Swap a reviewer of a paper for a candidate (forced): (paper, old, new)."""
    base = f"/venues/{venue_id}/assignments/{run}"
    pair = api_get(server, f"{base}/pairs", limit=1)["items"][0]
    paper, old = pair["paper_id"], pair["reviewer_id"]
    edges = api_get(server, f"{base}/papers/{paper}/edges", filter="candidates", limit=50)
    new = next(
        e["reviewer_id"] for e in edges["items"] if not e["assigned"] and not e.get("conflict")
    )
    api_post(
        server,
        f"{base}/edits",
        {
            "action": "swap",
            "paper_id": paper,
            "reviewer_id": new,
            "remove_reviewer_id": old,
            "force": True,
        },
    )
    return paper, old, new


def test_a_drafts_swap_is_its_own_until_promoted(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run = prepare_venue(live_server, sample_files, solve=SOLVE)
    assert run is not None
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    _paper, _old, new = _swap(live_server, venue_id, run)
    new_name = api_get(live_server, f"/venues/{venue_id}/reviewers/{new}")["name"]
    sign_in(page, chair)
    open_tab(page, "Assignment")
    own = page.get_by_role("table", name="This run's own rules")
    expect(own.locator("tbody tr")).to_have_count(2)
    expect(own).to_contain_text("Pinned")
    expect(own).to_contain_text("Forbidden")
    venue_pins = page.get_by_role("table", name="Pinned pairs")
    expect(venue_pins).to_contain_text("No pinned pairs")

    page.get_by_test_id("promote-all").click()
    confirm = dialog(page, re.compile("^Promote every rule of"))
    confirm.get_by_role("button", name="Promote").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("Promoted 2 rules")
    expect(own).to_contain_text("No rules of its own")
    expect(venue_pins).to_contain_text(new_name)
    assert api_get(live_server, f"/venues/{venue_id}/pins")["total"] == 1
    assert api_get(live_server, f"/venues/{venue_id}/forbids")["total"] == 1
    assert_console_clean(console_errors)


def test_dismiss_and_restore_a_conflict_and_preview_the_policy(
    page: Any, live_server: LiveServer, sample_files: dict[str, Any], console_errors: list[str]
) -> None:
    venue_id, run = prepare_venue(live_server, sample_files, solve=SOLVE)
    assert run is not None
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    people = api_get(live_server, f"/venues/{venue_id}/reviewers", limit=1)["items"]
    paper = api_get(live_server, f"/venues/{venue_id}/submissions", limit=1)["items"][0]
    api_post(
        live_server,
        f"/venues/{venue_id}/conflicts",
        {"paper_id": paper["id"], "reviewer_id": people[0]["id"], "reason": "former advisor"},
    )
    sign_in(page, chair)
    open_tab(page, "Statistics")
    page.get_by_label("Source").select_option("declared")
    conflicts = page.get_by_role("table", name="Conflicts of interest")
    expect(conflicts.locator("tbody tr")).to_have_count(1)
    conflicts.get_by_role("button", name=re.compile("^Dismiss the conflict of")).click()
    confirm = dialog(page, re.compile("^Dismiss the conflict of"))
    confirm.get_by_label(re.compile("^Why is it not a conflict")).fill("asked the wrong pair")
    confirm.get_by_role("button", name="Dismiss the conflict").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("Dismissed the conflict")
    expect(conflicts).to_contain_text("No conflicts recorded")
    dismissed = page.get_by_role("table", name="Dismissed conflicts")
    expect(dismissed).to_contain_text("asked the wrong pair")
    assert api_get(live_server, f"/venues/{venue_id}/conflicts", source="declared")["total"] == 0
    dismissed.get_by_role("button", name=re.compile("^Restore the conflict of")).click()
    expect(dismissed).to_contain_text("No dismissed conflicts")
    expect(conflicts.locator("tbody tr")).to_have_count(1)

    # the policy: the count a setting yields, shown before saving
    expected = api_post(
        live_server,
        f"/venues/{venue_id}/conflict-policy/preview",
        {"coauthor_window_years": None, "same_institution": False, "same_email_domain": True},
    )
    page.get_by_label("Co-author window (years; empty: any year)").fill("")
    page.get_by_label("same institution").uncheck()
    page.get_by_role("button", name="Preview count").click()
    count = page.get_by_test_id("policy-count")
    expect(count).to_contain_text(f"{expected['counts']['pairs']} conflicting pair")
    assert_console_clean(console_errors)


def _tight_venue(server: LiveServer) -> tuple[str, int]:
    """The repairs test's venue (tests/api/test_api_repairs.py): three papers, four
    reviewers, one paper each, two papers wanting the same reviewer."""
    venue_id = new_venue_id("repair")
    with server.client() as client:
        assert client.post("/venues", json={"id": venue_id, "name": venue_id}).status_code == 201
        for kind, body in (("reviewers", REVIEWERS), ("submissions", SUBMISSIONS)):
            assert client.post(f"/venues/{venue_id}/{kind}", json=body).status_code == 200
        job = client.post(
            f"/venues/{venue_id}/affinity/jobs", json={"config": {"method": "tfidf"}}
        ).json()
        wait_job(client, venue_id, job)
    return venue_id, solve_run(server, venue_id, PARAMS)


def test_a_repair_brings_a_better_reviewer_in_across_papers(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue_id, run = _tight_venue(live_server)
    base = f"/venues/{venue_id}/assignments/{run}"
    paper, repair = next(
        (p, items[0])
        for p in ("P1", "P2", "P3")
        if (
            items := [
                i
                for i in api_get(live_server, f"{base}/papers/{p}/repairs")["items"]
                if i["feasible"]
            ]
        )
    )
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Papers and reviewers")
    title = api_get(live_server, f"/venues/{venue_id}/submissions/{paper}")["title"]
    pick(page, "Paper", title, re.compile(re.escape(title)))
    repairs = page.get_by_test_id("repairs")
    expect(repairs).to_contain_text("net")
    name = repair["reviewer_id"].replace("_", " ").rstrip("1")
    repairs.get_by_role("button", name=f"Repair: bring {name} in").click()
    confirm = dialog(page, re.compile(f"^Bring {name} to"))
    expect(confirm.get_by_test_id("repair-summary")).to_contain_text("net")
    expect(confirm.get_by_test_id("score-change")).to_contain_text("Total score")
    confirm.get_by_role("button", name="Apply the repair").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("Repair applied")
    pairs = api_get(live_server, f"{base}/pairs", limit=10)["items"]
    assert (paper, repair["reviewer_id"]) in {(p["paper_id"], p["reviewer_id"]) for p in pairs}
    assert_console_clean(console_errors)


def test_reoptimise_these_papers_creates_a_draft(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue_id, run = _tight_venue(live_server)
    base = f"/venues/{venue_id}/assignments/{run}"
    paper = next(
        p
        for p in ("P1", "P2", "P3")
        if any(i["feasible"] for i in api_get(live_server, f"{base}/papers/{p}/repairs")["items"])
    )
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Papers and reviewers")
    title = api_get(live_server, f"/venues/{venue_id}/submissions/{paper}")["title"]
    pick(page, "Paper", title, re.compile(re.escape(title)))
    page.get_by_test_id("reoptimise").click()
    confirm = dialog(page, re.compile("^Re-optimise .* papers of"))
    confirm.get_by_role("button", name="Create the draft").click()
    expect(confirm).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("re-optimised")
    runs = api_get(live_server, f"/venues/{venue_id}/assignments")["items"]
    made = [r for r in runs if (r.get("derived_from") or {}).get("kind") == "re-optimise"]
    assert len(made) == 1 and made[0]["derived_from"]["assignment_id"] == run
    assert_console_clean(console_errors)


def test_assigning_over_a_quota_asks_then_applies_over_the_limit(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    venue_id, run = _tight_venue(live_server)
    base = f"/venues/{venue_id}/assignments/{run}"
    pairs = api_get(live_server, f"{base}/pairs", limit=10)["items"]
    paper = pairs[0]["paper_id"]
    # a reviewer of another paper, at their quota of one, who could review this one too
    edges = api_get(live_server, f"{base}/papers/{paper}/edges", filter="candidates", limit=50)
    full = next(
        e
        for e in edges["items"]
        if not e["assigned"]
        and not e.get("conflict")
        and e["reviewer_load"] >= e["reviewer_max_load"]
    )
    reviewer, name = full["reviewer_id"], full["reviewer_name"]
    # the paper wants a second reviewer: only the reviewer's quota stands in the way
    with live_server.client() as client:
        room = client.put(f"/venues/{venue_id}/paper-demands/{paper}", json={"demand": 2})
        assert room.status_code == 200, room.text
    version = api_get(live_server, base)["version"]
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    open_tab(page, "Papers and reviewers")
    title = api_get(live_server, f"/venues/{venue_id}/submissions/{paper}")["title"]
    pick(page, "Paper", title, re.compile(re.escape(title)))
    expect(page.get_by_test_id("paper-coverage")).to_contain_text("1 of 2 reviewers")
    page.get_by_role("button", name=f"Assign {name} over their quota").click()
    preview = dialog(page, f"Assign {name} to “{title}”")
    refusal = preview.get_by_test_id("edit-refusal")
    expect(refusal).to_contain_text("Over a limit:")
    expect(refusal).to_contain_text(f"reviewer '{reviewer}' would review 2 papers")
    expect(refusal).to_contain_text("over their max load of 1")
    expect(preview.get_by_test_id("edit-effect")).to_contain_text("1 → 2")
    # the preview changed nothing
    assert api_get(live_server, base)["version"] == version
    preview.get_by_label("Reason").fill("the only expert")
    preview.get_by_role("button", name="Assign over the limit").click()
    expect(preview).to_be_hidden()
    expect(page.get_by_test_id("toast").last).to_contain_text("done")
    expect(page.get_by_test_id("paper-coverage")).to_contain_text("2 of 2 reviewers")
    assert api_get(live_server, base)["version"] == version + 1
    over = api_get(live_server, f"{base}/reviewers", filter="over")["items"]
    assert [(r["reviewer_id"], r["load"], r["max_load"]) for r in over] == [(reviewer, 2, 1)]
    audit = api_get(live_server, f"/venues/{venue_id}/audit", limit=20)["items"]
    entry = next(e for e in audit if e["action"] == "assignment.assign")
    assert entry["detail"]["reason"] == "the only expert"
    assert any("over their max load of 1" in o for o in entry["detail"]["overfilled"])
    assert_console_clean(console_errors)
