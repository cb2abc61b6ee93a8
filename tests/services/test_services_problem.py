"""The assignment service on tables: unknown ids, bids, demand, loads, side constraints,
solver choice, canonical order, swaps that survive re-solves."""

from __future__ import annotations

import random
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from matching.violations import limit_violations
from recommender.corpus import InputError, Reviewer
from recommender.io import ScoreTable, read_scores
from reviewer_recommender.services.assignment import (
    assign,
    choose_solver,
    json_safe,
    validate_options,
)
from reviewer_recommender.services.edits import (
    apply_edit,
    edited_summary,
    params_limits,
    swap_edit,
)
from reviewer_recommender.services.errors import OptionError
from reviewer_recommender.services.params import AssignParams, RequiredAttribute
from reviewer_recommender.services.problem import AssignInputs, Rows, build_problem


def grid(n_papers: int = 3, n_reviewers: int = 4, seed: int = 0) -> ScoreTable:
    rng = np.random.default_rng(seed)
    papers = [f"p{i}" for i in range(n_papers)]
    reviewers = [f"r{i}" for i in range(n_reviewers)]
    frame = pd.DataFrame(
        [(p, r, float(rng.random())) for p in papers for r in reviewers],
        columns=["paper_id", "reviewer_id", "score"],
    )
    return ScoreTable.from_frame(frame, source="scores.csv")


def rows(records: list[tuple], columns: list[str], source: str = "f.csv", lines=True) -> Rows:
    frame = pd.DataFrame(records, columns=columns)
    if lines:
        frame["line"] = range(2, 2 + len(frame))
    return Rows(frame, source)


def test_unknown_ids_are_warnings_with_lines_except_in_pins() -> None:
    params = AssignParams(reviewers_per_paper=1, max_load=3)
    inputs = AssignInputs(
        scores=grid(),
        conflicts=rows([("p0", "r0"), ("p7", "r0")], ["paper_id", "reviewer_id"], "c.csv"),
        demand=rows([("p8", 1)], ["paper_id", "demand"], "d.csv"),
        max_loads=rows([("r9", 1)], ["reviewer_id", "max"], "m.csv"),
    )
    built = build_problem(inputs, params)
    assert built.warnings == [
        "c.csv:3 [paper_id]: unknown paper 'p7' (not in scores.csv): this conflict is ignored",
        "d.csv:2 [paper_id]: unknown paper 'p8' (not in scores.csv): this demand is ignored",
        "m.csv:2 [reviewer_id]: unknown reviewer 'r9' (not in scores.csv): this max is ignored",
    ]
    assert built.counts["conflicts_applied"] == 1
    inputs.strict = True
    with pytest.raises(InputError) as strict:
        build_problem(inputs, params)
    assert len(strict.value.problems) == 3
    pins = AssignInputs(
        scores=grid(),
        pins=rows([("p0", "r1"), ("p0", "zz")], ["paper_id", "reviewer_id"], "pins.csv"),
    )
    with pytest.raises(InputError) as error:
        build_problem(pins, params)
    assert [str(p) for p in error.value.problems] == [
        "pins.csv:3 [reviewer_id]: unknown reviewer 'zz' (not in scores.csv)"
    ]


def test_pin_without_score_or_on_a_conflict_is_an_error_naming_both_lines() -> None:
    frame = grid().to_frame()
    keep = ~((frame["paper_id"] == "p0") & (frame["reviewer_id"] == "r3"))
    sparse = ScoreTable.from_frame(frame[keep], source="s.csv")
    params = AssignParams(reviewers_per_paper=1)
    with pytest.raises(InputError, match=r"pins.csv:2: pinned pair \(p0, r3\) has no score"):
        build_problem(
            AssignInputs(
                scores=sparse, pins=rows([("p0", "r3")], ["paper_id", "reviewer_id"], "pins.csv")
            ),
            params,
        )
    clash = AssignInputs(
        scores=grid(),
        pins=rows([("p1", "r1")], ["paper_id", "reviewer_id"], "pins.csv"),
        bids=rows(
            [("p1", "r1", "Not Willing", -1.0)],
            ["paper_id", "reviewer_id", "label", "bid"],
            "bids.csv",
        ),
    )
    with pytest.raises(InputError, match=r"pins.csv:2: .* Not Willing bid \(bids.csv:2\)"):
        build_problem(clash, params)


def test_bids_fold_preferences_and_exclude_not_willing() -> None:
    scores = grid()
    bids = rows(
        [
            ("p0", "r0", "Very High", 1.0),
            ("p0", "r1", "Not Willing", -1.0),
            ("p1", "r2", "Low", -0.5),
        ],
        ["paper_id", "reviewer_id", "label", "bid"],
    )
    built = build_problem(AssignInputs(scores=scores, bids=bids), AssignParams(bid_weight=0.2))
    problem = built.problem
    frame = scores.to_frame()
    original = dict(
        zip(zip(frame["paper_id"], frame["reviewer_id"], strict=True), frame["score"], strict=True)
    )
    got = {
        (problem.paper_ids[p], problem.reviewer_ids[r]): s
        for p, r, s in zip(
            problem.pair_paper, problem.pair_reviewer, problem.pair_score, strict=True
        )
    }
    assert ("p0", "r1") not in got
    assert got[("p0", "r0")] == pytest.approx(original[("p0", "r0")] + 0.2)
    assert got[("p1", "r2")] == pytest.approx(original[("p1", "r2")] - 0.1)
    assert got[("p2", "r3")] == original[("p2", "r3")]
    unfolded = build_problem(
        AssignInputs(scores=scores, bids=bids, fold_bids=False), AssignParams()
    ).problem
    assert ("p0", "r1") not in {
        (unfolded.paper_ids[p], unfolded.reviewer_ids[r])
        for p, r in zip(unfolded.pair_paper, unfolded.pair_reviewer, strict=True)
    }
    assert np.allclose(np.sort(unfolded.pair_score), np.sort(np.delete(scores.score, 1)))


def test_demand_and_loads_come_from_parameters_then_files() -> None:
    params = AssignParams(
        reviewers_per_paper=2,
        max_load=3,
        min_load=2,
        demand={"p0": 1, "p1": 0},
        custom_max_load={"r0": 1},
    )
    inputs = AssignInputs(
        scores=grid(),
        demand=rows([("p1", 3)], ["paper_id", "demand"]),
        max_loads=rows([("r1", 5)], ["reviewer_id", "max"]),
    )
    problem = build_problem(inputs, params).problem
    assert problem.demand.tolist() == [1, 3, 2]
    assert problem.max_load.tolist() == [1, 5, 3, 3]
    assert problem.min_load.tolist() == [1, 2, 2, 2]


def test_row_order_does_not_change_the_problem_or_the_assignment(tmp_path: Path) -> None:
    frame = grid(5, 6, seed=3).to_frame()
    frame["score"] = frame["score"].round(1)  # many ties
    results = []
    for seed in range(3):
        shuffled = frame.sample(frac=1.0, random_state=seed)
        path = tmp_path / f"s{seed}.csv"
        shuffled.to_csv(path, index=False)
        table = read_scores(path)
        result = assign(AssignInputs(scores=table), AssignParams(reviewers_per_paper=2, max_load=2))
        results.append(result.pairs()[["paper_id", "reviewer_id"]])
    assert all(r.equals(results[0]) for r in results)


def profiles(**columns) -> list[Reviewer]:
    return [
        Reviewer(
            id=f"r{i}",
            email=columns.get("email", [""] * 4)[i],
            affiliation=columns.get("affiliation", [""] * 4)[i],
            attributes=MappingProxyType(columns.get("attributes", [{}] * 4)[i]),
        )
        for i in range(4)
    ]


def test_side_constraints_refuse_options_that_cannot_act_and_drop_those_that_cannot_bind() -> None:
    scores = grid()
    none = profiles()
    with pytest.raises(OptionError, match=r"no reviewer in reviewers\.csv has an affiliation"):
        build_problem(
            AssignInputs(scores=scores, reviewers=none, reviewers_source="reviewers.csv"),
            AssignParams(max_per_affiliation=1),
        )
    with pytest.raises(OptionError, match="needs the reviewers' profiles"):
        build_problem(AssignInputs(scores=scores), AssignParams(max_per_affiliation=1))
    distinct = profiles(affiliation=["A", "B", "C", "D"])
    built = build_problem(
        AssignInputs(scores=scores, reviewers=distinct), AssignParams(max_per_affiliation=1)
    )
    assert "cannot bind" in built.warnings[0] and not built.problem.side_constraints
    assert choose_solver(built.problem, AssignParams(max_per_affiliation=1)).name == "flow"
    domains = profiles(email=["a@x.org", "b@X.org", "c@y.org", ""])
    built = build_problem(
        AssignInputs(scores=scores, reviewers=domains),
        AssignParams(max_per_affiliation=1, institution_key="email_domain"),
    )
    assert list(built.problem.side_constraints[0].groups) == ["x.org", "x.org", "y.org", ""]
    assert choose_solver(built.problem, AssignParams(max_per_affiliation=1)).name == "ilp"
    senior = profiles(attributes=[{"Seniority": " Senior "}, {"seniority": "junior"}, {}, {}])
    required = AssignParams(require_attribute=RequiredAttribute(name="seniority", value="senior"))
    built = build_problem(AssignInputs(scores=scores, reviewers=senior), required)
    assert built.problem.side_constraints[0].mask.tolist() == [True, False, False, False]
    missing = AssignParams(require_attribute=RequiredAttribute(name="seniority", value="chair"))
    with pytest.raises(OptionError, match=r"values present: senior \(1\), junior \(1\)"):
        build_problem(AssignInputs(scores=scores, reviewers=senior), missing)


def test_solver_choice_in_words() -> None:
    problem = build_problem(AssignInputs(scores=grid()), AssignParams()).problem
    assert choose_solver(problem, AssignParams()).name == "flow"
    assert choose_solver(problem, AssignParams(probability_cap=0.5)).name == "randomized"
    fair = build_problem(AssignInputs(scores=grid()), AssignParams(fairness_keep=1.0)).problem
    assert choose_solver(fair, AssignParams(fairness_keep=1.0)).name == "ilp"
    with pytest.raises(OptionError, match="min-cost flow solver cannot enforce fairness"):
        validate_options(AssignParams(fairness_keep=1.0, solver="flow"), fair)
    with pytest.raises(OptionError, match="unknown solver 'magic'"):
        validate_options(AssignParams(solver="magic"), problem)


def test_a_swap_survives_the_next_solve() -> None:
    scores = grid(3, 4, seed=5)
    params = AssignParams(reviewers_per_paper=1, max_load=3)
    first = assign(AssignInputs(scores=scores), params)
    pairs = first.pairs()
    paper, old = pairs.iloc[0]["paper_id"], pairs.iloc[0]["reviewer_id"]
    new = next(r for r in scores.reviewer_ids if r != old)
    empty = pd.DataFrame(columns=["paper_id", "reviewer_id"])
    pins, forbids = apply_edit(empty, empty, swap_edit(paper, old, new))
    again = assign(
        AssignInputs(scores=scores, conflicts=Rows(forbids, "forbids"), pins=Rows(pins, "pins")),
        params,
    ).pairs()
    chosen = set(zip(again["paper_id"], again["reviewer_id"], strict=True))
    assert (paper, new) in chosen and (paper, old) not in chosen
    # the swap made the assignment worse; the solver's bound still bounds it
    edited = pairs.copy()
    edited.loc[0, "reviewer_id"] = new
    edited.loc[0, "score"] = float(
        scores.score[
            scores.keys == scores.paper_ids.index(paper) * 4 + scores.reviewer_ids.index(new)
        ][0]
    )
    demand, min_load, max_load = params_limits(params, scores.paper_ids, scores.reviewer_ids)
    broken = limit_violations(
        edited["paper_id"],
        edited["reviewer_id"],
        paper_ids=scores.paper_ids,
        demand=demand,
        reviewer_ids=scores.reviewer_ids,
        min_load=min_load,
        max_load=max_load,
    )
    figures = edited_summary(
        first.summary, edited, scores.reviewer_ids, broken, tightening=True, bound_of="the solve"
    )
    assert figures["objective"] <= figures["upper_bound"]
    assert figures["objective"] == pytest.approx(edited["score"].sum())
    assert figures["solver_objective"] == pytest.approx(first.summary["objective"])
    assert figures["constraints"] == {"satisfied": True, "violations": 0, "first": []}
    assert figures["bound_holds"] is True and figures["gap"] >= 0
    # a forced edit over a limit: the limit is named and no gap is claimed
    over = pd.concat([edited, edited.iloc[[0]].assign(reviewer_id=old)], ignore_index=True)
    broken = limit_violations(
        over["paper_id"],
        over["reviewer_id"],
        paper_ids=scores.paper_ids,
        demand=demand,
        reviewer_ids=scores.reviewer_ids,
        min_load=min_load,
        max_load=max_load,
    )
    forced = edited_summary(
        figures, over, scores.reviewer_ids, broken, tightening=False, bound_of="the solve"
    )
    assert forced["constraints"]["first"] == [f"paper {paper}: has 2 reviewers, needs 1"]
    assert forced["bound_holds"] is False and forced["gap"] is None and forced["edits"] == 2
    # swapping back and forth: the last edit wins
    pins, forbids = apply_edit(pins, forbids, swap_edit(paper, new, old))
    assert set(zip(pins["paper_id"], pins["reviewer_id"], strict=True)) == {(paper, old)}
    assert set(zip(forbids["paper_id"], forbids["reviewer_id"], strict=True)) == {(paper, new)}


def test_summary_is_json_safe_and_complete() -> None:
    result = assign(AssignInputs(scores=grid()), AssignParams(reviewers_per_paper=1, seed=4))
    report = result.report()
    for key in (
        "objective",
        "upper_bound",
        "gap",
        "solver",
        "seed",
        "parameters",
        "per_paper",
        "per_reviewer",
    ):
        assert key in report
    assert report["seed"] == 4 and report["parameters"]["reviewers_per_paper"] == 1
    assert json_safe({"x": float("nan"), "y": np.int64(3)}) == {"x": None, "y": 3}
    shuffled = random.Random(0).sample(report["per_paper"], k=len(report["per_paper"]))
    assert {p["paper_id"] for p in shuffled} == {"p0", "p1", "p2"}
