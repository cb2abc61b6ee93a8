"""The Compute tab's affinity tools: bringing scores computed elsewhere (a bad file refused
with its lines, a good one becoming the latest run, its explanation saying none is
available); the estimate before a job starts (a warning above ten minutes, the faster model
one click away) and the texts embedded on the running job's card."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer

from .e2e_support import new_venue_id, screenshot
from .page_actions import (
    JOB_TIMEOUT_MS,
    assert_console_clean,
    dialog,
    expect,
    open_tab,
    sign_in,
    wait_for_job,
)

pytestmark = pytest.mark.e2e

PAPERS = [
    {"id": f"P{i}", "title": f"Paper {i} on graphs", "abstract": "Graph networks.", "authors": []}
    for i in range(1, 4)
]
PERSONS = [
    {
        "id": f"~Person_{name}1",
        "name": f"Person {name}",
        "email": f"{name.lower()}@example.org",
        "publications": [{"title": "Graphs", "abstract": "Graph networks.", "year": 2024}],
    }
    for name in ("Ada", "Bob")
]


def _venue(server: LiveServer) -> tuple[str, str]:
    venue_id = new_venue_id("byo")
    with server.client() as client:
        assert client.post("/venues", json={"id": venue_id, "name": venue_id}).status_code == 201
        for kind, items in (("reviewers", PERSONS), ("submissions", PAPERS)):
            response = client.post(f"/venues/{venue_id}/{kind}", json=items)
            assert response.status_code == 200, response.text
    return venue_id, server.token("chair", venue_id, f"chair@{venue_id}")


def test_bring_your_own_scores_from_the_compute_tab(
    page: Any, live_server: LiveServer, tmp_path: Path, console_errors: list[str]
) -> None:
    _venue_id, chair = _venue(live_server)
    sign_in(page, chair)
    open_tab(page, "Compute")
    expect(page.get_by_test_id("affinity-state")).to_contain_text("No scores yet")

    bad = tmp_path / "specter2-bad.csv"
    bad.write_text("head,tail,weight\nP1,~Person_Ada1,0.9\nP7,~Person_Ada1,0.2\n", "utf-8")
    page.get_by_label("Scores file").set_input_files(str(bad))
    page.get_by_role("button", name="Upload scores").click()
    report = page.get_by_test_id("upload-error-scores")
    expect(report).to_contain_text("specter2-bad.csv was not loaded")
    row = report.get_by_test_id("problem-table").locator("tbody tr").first
    expect(row).to_contain_text("3")
    expect(row).to_contain_text("unknown paper id 'P7'")
    expect(page.get_by_test_id("affinity-state")).to_contain_text("No scores yet")

    good = tmp_path / "specter2.csv"
    good.write_text(
        "head,tail,weight\n"
        + "".join(
            f"P{i},~Person_{name}1,{0.1 * i + (0.5 if name == 'Ada' else 0):.2f}\n"
            for i in range(1, 4)
            for name in ("Ada", "Bob")
        ),
        "utf-8",
    )
    page.get_by_label("Scores file").set_input_files(str(good))
    page.get_by_role("button", name="Upload scores").click()
    expect(page.get_by_test_id("upload-ok-scores")).to_contain_text(
        "6 pairs of 3 of 3 papers and 2 of 2 reviewers"
    )
    expect(page.get_by_test_id("affinity-state")).to_contain_text("uploaded from specter2.csv")
    screenshot(page, "byo-scores-uploaded")

    # its explanation says none is available (the heatmap's keyboard path to a pair)
    open_tab(page, "Scores")
    expect(page.get_by_test_id("affinity-run-info")).to_contain_text("uploaded from specter2.csv")
    page.get_by_role("button", name="Draw heatmap").click()
    plot = page.get_by_role("application", name="3 papers by 2 reviewers")
    expect(page.get_by_test_id("heatmap").locator("svg.heatmap-axes text").first).to_be_attached()
    plot.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    why = dialog(page, "Why this score")
    expect(why.get_by_test_id("explain-unavailable")).to_contain_text(
        "No explanation available: these scores were uploaded from specter2.csv"
    )
    page.keyboard.press("Escape")
    assert_console_clean(console_errors, "affinity/upload")  # the bad file's 422, on purpose


def _many_papers_venue(server: LiveServer, prefix: str, per_person: int) -> tuple[str, str]:
    """Ten persons with ``per_person`` publications each, texts of this run only (the
    server's embedding cache outlives a test session), and three submissions."""
    venue_id = new_venue_id(prefix)
    persons = [
        {
            "id": f"~Many_Papers{i}",
            "name": f"Many Papers {i}",
            "email": f"many{i}@example.org",
            "publications": [
                {"title": f"Graph study {i}.{j}", "abstract": f"{venue_id} {j}.", "year": 2020}
                for j in range(per_person)
            ],
        }
        for i in range(10)
    ]
    with server.client() as client:
        assert client.post("/venues", json={"id": venue_id, "name": venue_id}).status_code == 201
        for kind, items in (("reviewers", persons), ("submissions", PAPERS)):
            response = client.post(f"/venues/{venue_id}/{kind}", json=items)
            assert response.status_code == 200, response.text
    return venue_id, server.token("chair", venue_id, f"chair@{venue_id}")


def test_estimate_warns_and_offers_the_faster_model_in_one_click(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    # 1,300 publications: above ten minutes for MPNet at its known 2.1 texts/s
    _venue_id, chair = _many_papers_venue(live_server, "estimate", 130)
    sign_in(page, chair)
    open_tab(page, "Compute")
    box = page.get_by_test_id("affinity-estimate")
    page.get_by_label("Method").select_option("embedding")
    page.get_by_label("Embedding model").select_option("all-mpnet-base-v2")
    expect(box).to_contain_text("Long job.")
    expect(box).to_contain_text("1,303 of 1,303 texts to embed with all-mpnet-base-v2")
    # starting anyway asks first; Back starts nothing
    page.get_by_role("button", name="Compute affinity").click()
    long_job = dialog(page, "A long affinity job")
    expect(long_job).to_contain_text("all-MiniLM-L6-v2 would take about")
    long_job.get_by_role("button", name="Back").click()
    expect(page.get_by_test_id("job")).to_have_count(0)
    screenshot(page, "affinity-estimate-warning", full_page=False)
    # one click to the faster model, estimated again
    page.get_by_test_id("use-faster-model").click()
    expect(page.get_by_label("Embedding model")).to_have_value("all-MiniLM-L6-v2")
    expect(box).to_contain_text("Estimate: About")
    expect(box).to_contain_text("texts to embed with all-MiniLM-L6-v2")
    expect(box).not_to_contain_text("Long job")
    assert_console_clean(console_errors)


def test_the_running_jobs_card_shows_texts_embedded_rate_and_time_left(
    page: Any, live_server: LiveServer, console_errors: list[str]
) -> None:
    _venue_id, chair = _many_papers_venue(live_server, "texts", 40)
    # 403 texts: several progress reports, each shown for ~2 s, on a fast machine too (the card
    # is polled every 0.3 s; a job of one chunk would end before a poll saw it running)
    sign_in(page, chair)
    open_tab(page, "Compute")
    box = page.get_by_test_id("affinity-estimate")
    page.get_by_label("Embedding model").select_option("all-MiniLM-L6-v2")
    # (the three submissions may be cached by an earlier test)
    expect(box).to_contain_text(re.compile(r"40\d of 403 texts to embed with all-MiniLM-L6-v2"))
    page.evaluate(
        """() => {
          window.textsSeen = [];
          new MutationObserver(() => {
            for (const line of document.querySelectorAll('[data-testid="job-texts"]')) {
              if (!line.hidden && line.textContent) window.textsSeen.push(line.textContent);
            }
          }).observe(document.querySelector('#job-list'),
                     { subtree: true, childList: true, characterData: true, attributes: true });
        }"""
    )
    page.get_by_role("button", name="Compute affinity").click()
    card = wait_for_job(page, "affinity", timeout_ms=4 * JOB_TIMEOUT_MS)
    seen = page.evaluate("window.textsSeen")
    assert any(re.search(r"of 40\d texts embedded · [\d.,]+ texts/s", s) for s in seen), seen
    expect(card.get_by_test_id("job-texts")).to_be_hidden()
    # the texts are cached now: nothing left to embed
    expect(box).to_contain_text("every text is already embedded with all-MiniLM-L6-v2")

    # a pair's explanation reads: a sentence, the score part by part, each publication's share
    open_tab(page, "Scores")
    page.get_by_role("button", name="Draw heatmap").click()
    plot = page.get_by_role("application", name=re.compile(r"3 papers by \d+ reviewers"))
    expect(page.get_by_test_id("heatmap").locator("svg.heatmap-axes text").first).to_be_attached()
    plot.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    why = dialog(page, "Why this score")
    # (a person's 15 near-identical publications count once: "This reviewer's only paper")
    expect(why.get_by_test_id("explain-sentence")).to_contain_text("is close to this submission")
    parts = why.get_by_test_id("explain-parts")
    expect(parts).to_contain_text("Embedding")
    expect(parts).to_contain_text("Score")
    expect(why.get_by_test_id("explain-share").first).to_contain_text("of the evidence")
    screenshot(page, "explanation-in-words", full_page=False)
    page.keyboard.press("Escape")
    assert_console_clean(console_errors)
