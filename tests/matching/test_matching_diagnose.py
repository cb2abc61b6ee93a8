import numpy as np
import pytest

from matching import (
    AssignmentProblem,
    FlowSolver,
    IlpSolver,
    Infeasible,
    MaxPerGroup,
    RequireAttribute,
    diagnose,
)


def problem_from(scores, **kwargs) -> AssignmentProblem:
    scores = np.asarray(scores, dtype=float)
    return AssignmentProblem.from_dense(
        scores,
        paper_ids=[f"P{i}" for i in range(scores.shape[0])],
        reviewer_ids=[f"R{j}" for j in range(scores.shape[1])],
        **kwargs,
    )


def kinds(diagnosis) -> list[str]:
    return [c.kind for c in diagnosis.causes]


def test_total_demand_exceeds_capacity() -> None:
    problem = problem_from(np.ones((76, 20)), demand=3, max_load=10)
    with pytest.raises(Infeasible, match="total demand 228 exceeds total capacity 200") as err:
        FlowSolver().solve(problem)
    cause = err.value.diagnosis.causes[0]
    assert cause.kind == "capacity" and "28" in cause.relaxation


def test_paper_with_too_few_eligible_reviewers() -> None:
    conflicts = np.zeros((3, 4), dtype=bool)
    conflicts[1, :2] = True
    problem = problem_from(np.ones((3, 4)), demand=3, max_load=3, conflicts=conflicts)
    diagnosis = diagnose(problem)
    assert kinds(diagnosis) == ["paper_eligible"]
    assert "paper P1 has 2 eligible reviewers, needs 3" in str(diagnosis)
    assert diagnosis.causes[0].ids == ("P1",)


def test_reviewer_minimum_cannot_be_met() -> None:
    conflicts = np.zeros((4, 3), dtype=bool)
    conflicts[:3, 2] = True
    problem = problem_from(
        np.ones((4, 3)), demand=1, min_load=[0, 0, 2], max_load=3, conflicts=conflicts
    )
    diagnosis = diagnose(problem)
    assert "reviewer R2 has 1 candidate papers, min load 2" in str(diagnosis)
    assert diagnosis.causes[0].ids == ("R2",)


def test_total_min_load_exceeds_demand() -> None:
    problem = problem_from(np.ones((2, 3)), demand=1, min_load=1, max_load=2)
    diagnosis = diagnose(problem)
    assert "total minimum load 3 exceeds total demand 2" in str(diagnosis)
    assert "min_load_total" in kinds(diagnosis)


def test_forced_pairs_over_reviewer_max_and_paper_demand() -> None:
    forced = np.zeros((3, 3), dtype=bool)
    forced[:, 0] = True
    forced[0, 1] = True
    problem = problem_from(np.ones((3, 3)), demand=1, max_load=[2, 3, 3], forced=forced)
    text = str(diagnose(problem))
    assert "reviewer R0 has 3 forced pairs, max load 2" in text
    assert "paper P0 has 2 forced pairs, demand 1" in text


def test_required_attribute_missing() -> None:
    conflicts = np.zeros((3, 4), dtype=bool)
    conflicts[2, 0] = True
    problem = problem_from(np.ones((3, 4)), demand=2, max_load=3, conflicts=conflicts)
    senior = np.array([True, False, False, False])
    problem = problem.with_side_constraints(RequireAttribute(senior, name="senior"))
    with pytest.raises(Infeasible, match="paper P2 has 0 eligible reviewers with senior") as err:
        IlpSolver().solve(problem)
    assert err.value.diagnosis.causes[0].ids == ("P2",)


def test_groups_too_small() -> None:
    problem = problem_from(np.ones((2, 4)), demand=3, max_load=3)
    groups = np.array(["a", "a", "b", "b"])
    problem = problem.with_side_constraints(MaxPerGroup(groups, limit=1))
    diagnosis = diagnose(problem)
    assert kinds(diagnosis) == ["group"]
    assert "paper P0 can get 2 reviewers with at most 1 per group, needs 3" in str(diagnosis)


def test_hall_violation_found_by_max_flow() -> None:
    # P0..P2 may only go to R0 and R1 (capacity 2 each): they need 6 reviews but get 4,
    # although every count check passes.
    conflicts = np.zeros((5, 4), dtype=bool)
    conflicts[:3, 2:] = True
    problem = problem_from(np.ones((5, 4)), demand=2, max_load=[2, 2, 4, 4], conflicts=conflicts)
    diagnosis = diagnose(problem)
    assert diagnosis.flow_checked and diagnosis.feasible is False
    assert kinds(diagnosis)[0] == "hall_papers"
    assert diagnosis.causes[0].ids == ("P0", "P1", "P2")
    assert "need 6 more reviews but their eligible reviewers can give at most 4" in str(diagnosis)
    assert "max-flow" in str(diagnosis)


def test_hall_violation_on_reviewer_minimums() -> None:
    # R0 and R1 each need 2 papers but both can only review P0 and P1 (demand 1 each).
    conflicts = np.zeros((4, 3), dtype=bool)
    conflicts[2:, :2] = True
    problem = problem_from(
        np.ones((4, 3)), demand=1, min_load=[2, 2, 0], max_load=4, conflicts=conflicts
    )
    diagnosis = diagnose(problem)
    assert "hall_reviewers" in kinds(diagnosis)
    cause = diagnosis.causes[kinds(diagnosis).index("hall_reviewers")]
    assert cause.ids == ("R0", "R1")
    assert "need at least 4 more papers but their candidate papers can take at most 2" in (
        cause.message
    )


def test_feasible_problem_has_no_cause() -> None:
    problem = problem_from(np.ones((4, 4)), demand=2, min_load=1, max_load=3)
    diagnosis = diagnose(problem)
    assert not diagnosis.causes and diagnosis.flow_checked and diagnosis.feasible


def test_side_constraints_that_conflict_only_together_are_named() -> None:
    # Each paper needs 2 reviewers: one from each group (limit 1 per group); both seniors
    # are in group "a", so "a senior" + "at most one per group" + demand 2 is fine, but
    # demanding 2 seniors per paper with at most 1 per group is not, though every count
    # check passes on its own.
    problem = problem_from(np.ones((2, 4)), demand=2, max_load=2)
    groups = np.array(["a", "a", "b", "b"])
    senior = np.array([True, True, False, False])
    problem = problem.with_side_constraints(
        MaxPerGroup(groups, limit=1), RequireAttribute(senior, min_count=2, name="senior")
    )
    with pytest.raises(Infeasible) as err:
        IlpSolver().solve(problem)
    cause = err.value.diagnosis.causes[-1]
    assert cause.kind == "side_constraint"
    assert "'at most 1 reviewer of one group per paper'" in cause.message
    assert "'at least 2 reviewers with senior per paper'" in cause.message
    assert "cannot all hold at once" in cause.message
