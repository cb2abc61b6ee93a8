"""The Data tab's records on the bundled sample (76 papers x 27 reviewers): a paper of the live
run found by its id, withdrawn (the emergency re-assignment without it offered and made), and a
replacing submissions upload whose diff is shown first and applies only when confirmed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer

from .e2e_support import SUBMISSIONS, api_get, deploy, prepare_venue, screenshot
from .page_actions import assert_console_clean, dialog, expect, sign_in, upload

pytestmark = pytest.mark.e2e

SOLVE = {"reviewers_per_paper": 3, "max_load": 10, "solver": "flow"}


def test_records_list_withdraw_and_upload_diff(
    page: Any,
    live_server: LiveServer,
    sample_files: dict[str, Any],
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    venue_id, run = prepare_venue(live_server, sample_files, solve=SOLVE)
    assert run is not None
    deploy(live_server, venue_id, run)
    chair = live_server.token("chair", venue_id, f"chair@{venue_id}")
    sign_in(page, chair)
    records = page.get_by_test_id("records")
    table = records.get_by_role("table", name="Submissions")
    expect(records.get_by_text("Submissions 1–25 of 76")).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(25)

    # filter by id, withdraw it: the live run's re-assignment is offered, and made
    paper = "iclr2026-000-01"
    records.get_by_label("Filter records").fill(paper)
    expect(table.locator("tbody tr")).to_have_count(1)
    records.get_by_role("button", name=f"Withdraw {paper}").click()
    withdraw = dialog(page, f"Withdraw {paper}")
    withdraw.get_by_label("Reason (audited)").fill("desk rejected")
    withdraw.get_by_role("button", name="Withdraw").click()
    expect(table.get_by_test_id("record-status")).to_have_text("withdrawn")
    offer = records.get_by_test_id("withdraw-live")
    expect(offer).to_contain_text("3 pairs in the live run")
    screenshot(page, "records-withdraw")
    offer.get_by_role("button", name=re.compile("^Re-assign live run")).click()
    expect(page.get_by_test_id("toast").last).to_contain_text(f"drafted without {paper}")
    drafts = [r for r in api_get(live_server, f"/venues/{venue_id}/assignments")["items"]]
    newest = max(drafts, key=lambda r: r["id"])
    assert newest["state"] == "draft" and newest["id"] != run
    pairs = api_get(live_server, f"/venues/{venue_id}/assignments/{newest['id']}/pairs", limit=1000)
    assert not any(p["paper_id"] == paper for p in pairs["items"])
    records.get_by_label("Record status").select_option("withdrawn")
    records.get_by_label("Filter records").fill("")
    expect(table.locator("tbody tr")).to_have_count(1)

    # a replacing upload: its diff first, applied only on confirm
    original = json.loads(SUBMISSIONS.read_text(encoding="utf-8"))
    kept = dict(list(original.items())[:70])
    first = next(iter(kept))
    kept[first] = {**kept[first], "content": {**kept[first]["content"], "title": "A new title"}}
    replacing = tmp_path / "submissions.json"
    replacing.write_text(json.dumps(kept), encoding="utf-8")
    upload(page, "Submission file", replacing, "Upload submissions")
    diff = page.get_by_test_id("upload-diff-submissions")
    expect(diff.get_by_test_id("diff-counts-submissions")).to_contain_text("0 added")
    expect(diff.get_by_test_id("diff-counts-submissions")).to_contain_text("1 changed")
    expect(diff.get_by_test_id("diff-counts-submissions")).to_contain_text("6 not in the file")
    screenshot(page, "records-upload-diff")
    assert api_get(live_server, f"/venues/{venue_id}/submissions/{first}")["title"] != "A new title"
    diff.get_by_label(re.compile("^Withdraw the 6 submissions")).check()
    diff.get_by_role("button", name="Apply this upload").click()
    expect(page.get_by_test_id("upload-ok-submissions")).to_contain_text("6 withdrawn")
    assert api_get(live_server, f"/venues/{venue_id}/submissions/{first}")["title"] == "A new title"
    withdrawn = api_get(live_server, f"/venues/{venue_id}/submissions", status="withdrawn")
    assert withdrawn["total"] == 7
    assert_console_clean(console_errors)


def test_constraint_and_demand_uploads_load_valid_lines_and_list_the_others(
    page: Any,
    live_server: LiveServer,
    sample_files: dict[str, Any],
    console_errors: list[str],
    tmp_path: Path,
) -> None:
    """HotCRP style in the Data tab: a conflicts file and a demand file with bad lines load
    their valid lines and list the others by line, counted as the audit log counts them."""
    venue_id, _run = prepare_venue(live_server, sample_files)
    reviewer = api_get(live_server, f"/venues/{venue_id}/reviewers", limit=1)["items"][0]["id"]
    paper = "iclr2026-000-01"
    constraints = tmp_path / "constraints.csv"
    constraints.write_text(
        f"paper_id,reviewer_id,value\n{paper},{reviewer},-1\nno-such-paper,{reviewer},-1\n"
        f"{paper},nobody,1\n",
        encoding="utf-8",
    )
    demands = tmp_path / "demand.csv"
    demands.write_text(f"paper_id,demand\n{paper},4\nno-such-paper,2\n", encoding="utf-8")
    sign_in(page, live_server.token("chair", venue_id, f"chair@{venue_id}"))
    upload(page, "Constraint file", constraints, "Upload conflicts")
    loaded = page.get_by_test_id("upload-ok-constraints")
    expect(loaded).to_contain_text("1 new")
    skipped = loaded.get_by_test_id("upload-skipped-constraints")
    expect(skipped).to_contain_text("2 lines skipped; the others were loaded")
    expect(skipped.get_by_test_id("problem-table")).to_contain_text(
        "unknown paper id 'no-such-paper'"
    )
    expect(skipped.get_by_test_id("problem-table")).to_contain_text("unknown reviewer id 'nobody'")
    upload(page, "Paper demand file", demands, "Upload paper demands")
    skipped = page.get_by_test_id("upload-skipped-paper-demands")
    expect(skipped).to_contain_text("1 line skipped; the others were loaded")
    screenshot(page, "data-upload-skipped-lines")
    entries = api_get(live_server, f"/venues/{venue_id}/audit")["items"]
    assert [(e["action"], e["detail"]["skipped_lines"]) for e in entries[:2]] == [
        ("paper_demands.upload", 1),
        ("constraints.upload", 2),
    ]
    assert api_get(live_server, f"/venues/{venue_id}/paper-demands")["items"][0]["demand"] == 4
    assert_console_clean(console_errors)
