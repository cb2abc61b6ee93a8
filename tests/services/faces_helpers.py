"""Instances written as files, run through the faces (CLI in-process, API job), and an
independent exact PuLP model that says what the answer must be.

The oracle knows the documented rules, not the code: unknown ids in pins are errors (exit 1),
elsewhere they are ignored; Not Willing / Conflict bids and conflicts are never assigned;
other bids add ``bid_weight x bid``; a reviewer's minimum load is capped by their maximum.
"""

from __future__ import annotations

import contextlib
import io
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulp

BID_VALUES = {
    "Very High": 1.0,
    "High": 0.5,
    "Neutral": 0.0,
    "Low": -0.5,
    "Very Low": -1.0,
}
EXCLUDING = ("Not Willing", "Conflict")

Pair = tuple[str, str]


@dataclass
class Instance:
    """One assignment instance, in terms of ids (reviewer ids without ``~``)."""

    scores: dict[Pair, float]
    conflicts: list[Pair] = field(default_factory=list)
    pins: list[Pair] = field(default_factory=list)
    bids: dict[Pair, str] = field(default_factory=dict)
    demand: dict[str, int] = field(default_factory=dict)
    custom_max: dict[str, int] = field(default_factory=dict)
    reviewers_per_paper: int = 2
    min_load: int = 0
    max_load: int = 2
    bid_weight: float = 0.1

    @property
    def papers(self) -> list[str]:
        return sorted({p for p, _ in self.scores})

    @property
    def reviewers(self) -> list[str]:
        return sorted({r for _, r in self.scores})

    def knows(self, paper: str | None = None, reviewer: str | None = None) -> bool:
        return (paper is None or paper in self.papers) and (
            reviewer is None or reviewer in self.reviewers
        )

    def has_unknown_ids(self) -> bool:
        pairs = [*self.conflicts, *self.pins, *self.bids]
        return (
            any(not self.knows(p, r) for p, r in pairs)
            or any(not self.knows(paper=p) for p in self.demand)
            or any(not self.knows(reviewer=r) for r in self.custom_max)
        )


@dataclass
class Format:
    """How the files are written: header or not, BOM, CRLF, blank lines, ``~`` prefixes."""

    header: bool = True
    bom: bool = False
    crlf: bool = False
    blank_lines: bool = False
    tilde: bool = False


def _csv(rows: list[list[Any]], header: list[str], style: Format) -> bytes:
    lines = [",".join(header)] if style.header else []
    for row in rows:
        lines.append(",".join(str(cell) for cell in row))
        if style.blank_lines:
            lines.append("")
    newline = "\r\n" if style.crlf else "\n"
    text = newline.join(lines) + (newline if lines else "")
    return ("\ufeff" if style.bom else "").encode("utf-8") + text.encode("utf-8")


def write_instance(instance: Instance, folder: Path, style: Format) -> dict[str, Path]:
    """Files of ``instance`` in ``folder``; keys are the CLI options they go to."""
    tilde = "~" if style.tilde else ""
    files: dict[str, Path] = {}

    def put(name: str, rows: list[list[Any]], header: list[str]) -> None:
        path = folder / f"{name}.csv"
        path.write_bytes(_csv(rows, header, style))
        files[name] = path

    put(
        "scores",
        [[p, tilde + r, repr(s)] for (p, r), s in instance.scores.items()],
        ["paper_id", "reviewer_id", "score"],
    )
    constraints = [[p, tilde + r, -1] for p, r in instance.conflicts] + [
        [p, tilde + r, 1] for p, r in instance.pins
    ]
    if constraints:
        put("constraints", constraints, ["paper_id", "reviewer_id", "value"])
    if instance.bids:
        put(
            "bids",
            [[p, tilde + r, label] for (p, r), label in instance.bids.items()],
            ["paper_id", "reviewer_id", "bid"],
        )
    if instance.demand:
        put("demand", [[p, d] for p, d in instance.demand.items()], ["paper_id", "demand"])
    if instance.custom_max:
        put(
            "custom",
            [[tilde + r, m] for r, m in instance.custom_max.items()],
            ["reviewer_id", "max"],
        )
    return files


def cli_args(instance: Instance, files: dict[str, Path], output: Path) -> list[str]:
    args = [
        "assign",
        "--scores",
        str(files["scores"]),
        "--output",
        str(output),
        "--reviewers-per-paper",
        str(instance.reviewers_per_paper),
        "--min-papers",
        str(instance.min_load),
        "--max-papers",
        str(instance.max_load),
    ]
    for option, key in (
        ("--conflicts", "constraints"),
        ("--bids", "bids"),
        ("--demand", "demand"),
        ("--custom-max-papers", "custom"),
    ):
        if key in files:
            args += [option, str(files[key])]
    if "bids" in files:
        args += ["--bid-weight", repr(instance.bid_weight)]
    return args


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """The CLI in-process: exit code, stdout, stderr."""
    from reviewer_recommender.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@dataclass
class Expected:
    """``outcome``: "error" (exit 1), "infeasible" (exit 2) or "optimal" (exit 0, with
    ``objective``)."""

    outcome: str
    objective: float = 0.0
    reason: str = ""


def effective_scores(instance: Instance) -> dict[Pair, float]:
    """Scores of the pairs that may be assigned, bids folded in."""
    banned = set(instance.conflicts) | {
        pair for pair, label in instance.bids.items() if label in EXCLUDING
    }
    scores = {}
    for pair, score in instance.scores.items():
        if pair in banned:
            continue
        label = instance.bids.get(pair)
        bonus = instance.bid_weight * BID_VALUES[label] if label in BID_VALUES else 0.0
        scores[pair] = score + bonus
    return scores


def oracle(instance: Instance) -> Expected:
    """What the faces must answer, from the documented rules and an exact PuLP model."""
    if not instance.scores:
        return Expected("error", reason="no score rows")
    if instance.min_load > instance.max_load:
        return Expected("error", reason="minimum load above the maximum")
    banned = set(instance.conflicts) | {
        pair for pair, label in instance.bids.items() if label in EXCLUDING
    }
    for pair in instance.pins:
        if not instance.knows(*pair):
            return Expected("error", reason="pin names an unknown id")
        if pair not in instance.scores:
            return Expected("error", reason="pin without a score")
        if pair in banned:
            return Expected("error", reason="pin is also a conflict / Not Willing")
    scores = effective_scores(instance)
    model = pulp.LpProblem("oracle", pulp.LpMaximize)
    x = {pair: pulp.LpVariable(f"x_{i}", cat="Binary") for i, pair in enumerate(scores)}
    model += pulp.lpSum(score * x[pair] for pair, score in scores.items())
    for paper in instance.papers:
        need = instance.demand.get(paper, instance.reviewers_per_paper)
        model += pulp.lpSum(x[pair] for pair in x if pair[0] == paper) == need
    for reviewer in instance.reviewers:
        top = instance.custom_max.get(reviewer, instance.max_load)
        low = min(instance.min_load, top)
        load = pulp.lpSum(x[pair] for pair in x if pair[1] == reviewer)
        model += load <= top
        model += load >= low
    for pair in set(instance.pins):
        model += x[pair] == 1
    status = model.solve(pulp.PULP_CBC_CMD(msg=False))
    if pulp.LpStatus[status] != "Optimal":
        return Expected("infeasible")
    return Expected("optimal", objective=float(pulp.value(model.objective) or 0.0))


def check_hard_constraints(instance: Instance, pairs: list[Pair]) -> None:
    """Every hard constraint of ``instance`` holds for ``pairs`` (checked from the instance,
    not from the code under test)."""
    chosen = set(pairs)
    assert len(chosen) == len(pairs), "a pair is assigned twice"
    allowed = effective_scores(instance)
    assert chosen <= set(allowed), f"ineligible pairs assigned: {sorted(chosen - set(allowed))}"
    for paper in instance.papers:
        need = instance.demand.get(paper, instance.reviewers_per_paper)
        got = sum(1 for p, _ in pairs if p == paper)
        assert got == need, f"paper {paper}: {got} reviewers, demand {need}"
    for reviewer in instance.reviewers:
        top = instance.custom_max.get(reviewer, instance.max_load)
        low = min(instance.min_load, top)
        load = sum(1 for _, r in pairs if r == reviewer)
        assert low <= load <= top, f"reviewer {reviewer}: load {load} outside {low}..{top}"
    assert set(instance.pins) <= chosen, "a pin is missing"


def objective_of(instance: Instance, pairs: list[Pair]) -> float:
    scores = effective_scores(instance)
    return sum(scores[pair] for pair in pairs)


def tolerance(instance: Instance) -> float:
    return 1e-6 * (1.0 + sum(abs(s) for s in instance.scores.values()))


# --- the API job path -------------------------------------------------------------------


class ApiFace:
    """A running app (inline jobs) into which instances are loaded as a venue's stored
    scores, conflicts, pins and bids, then solved with ``POST /venues/{id}/assignments``."""

    def __init__(self, client: Any, database: Any):
        self.client = client
        self.database = database

    def solve(
        self, instance: Instance, *, stored_limits: bool = False
    ) -> tuple[str, list[Pair] | str]:
        """("ok", pairs) or ("failed", error) or ("refused", detail). ``stored_limits``: the
        instance's demand and custom max loads become the venue's stored tables instead of
        the request's maps."""
        from reviewer_recommender.services.tokens import create_token
        from reviewer_recommender.storage.models import (
            AffinityRun,
            AffinityScore,
            Bid,
            Conflict,
            PaperDemand,
            Pin,
            ReviewerMaxLoad,
            ReviewerRow,
            SubmissionRow,
            Venue,
        )

        venue = f"v-{uuid.uuid4().hex[:10]}"
        with self.database.session() as session:
            session.add(Venue(id=venue, name=venue))
            session.flush()
            session.add_all(ReviewerRow(venue_id=venue, id=r) for r in instance.reviewers)
            session.add_all(SubmissionRow(venue_id=venue, id=p) for p in instance.papers)
            run = AffinityRun(venue_id=venue, n_papers=0, n_reviewers=0, top_n=0)
            session.add(run)
            session.flush()
            # what the affinity job stores: scores with bid preferences folded in
            for (p, r), score in instance.scores.items():
                label = instance.bids.get((p, r))
                bonus = instance.bid_weight * BID_VALUES[label] if label in BID_VALUES else 0.0
                session.add(
                    AffinityScore(run_id=run.id, paper_id=p, reviewer_id=r, score=score + bonus)
                )
            for p, r in dict.fromkeys(instance.conflicts):
                session.add(Conflict(venue_id=venue, paper_id=p, reviewer_id=r, source="uploaded"))
            for p, r in dict.fromkeys(instance.pins):
                session.add(Pin(venue_id=venue, paper_id=p, reviewer_id=r))
            for (p, r), label in instance.bids.items():
                session.add(
                    Bid(
                        venue_id=venue,
                        paper_id=p,
                        reviewer_id=r,
                        label=label,
                        bid=BID_VALUES.get(label, -1.0),
                    )
                )
                if label in EXCLUDING:
                    session.add(
                        Conflict(
                            venue_id=venue, paper_id=p, reviewer_id=r, source="bid", reason=label
                        )
                    )
            if stored_limits:
                session.add_all(
                    PaperDemand(venue_id=venue, paper_id=p, demand=d)
                    for p, d in instance.demand.items()
                )
                session.add_all(
                    ReviewerMaxLoad(venue_id=venue, reviewer_id=r, max_load=m)
                    for r, m in instance.custom_max.items()
                )
            session.commit()
        token = create_token(self.database, name=f"chair@{venue}", role="chair", venue_id=venue)
        body: dict[str, Any] = {
            "reviewers_per_paper": instance.reviewers_per_paper,
            "min_load": instance.min_load,
            "max_load": instance.max_load,
        }
        if instance.demand and not stored_limits:
            body["demand"] = instance.demand
        if instance.custom_max and not stored_limits:
            body["custom_max_load"] = instance.custom_max
        headers = {"Authorization": f"Bearer {token}"}
        response = self.client.post(f"/venues/{venue}/assignments", json=body, headers=headers)
        if response.status_code != 202:
            return "refused", str(response.json().get("detail"))
        job = response.json()
        if job["state"] != "succeeded":
            return "failed", job["error"]
        assignment = job["result"]["assignment_id"]
        pairs: list[Pair] = []
        offset = 0
        while True:
            page = self.client.get(
                f"/venues/{venue}/assignments/{assignment}/pairs",
                params={"limit": 500, "offset": offset},
                headers=headers,
            ).json()
            pairs += [(item["paper_id"], item["reviewer_id"]) for item in page["items"]]
            offset += len(page["items"])
            if offset >= page["total"] or not page["items"]:
                return "ok", pairs
