"""Assignment problems and their solvers.

Knows nothing of files, HTTP or how scores were made: it takes ids, arrays and masks.
"""

from matching.assignment import Assignment
from matching.problem import AssignmentProblem, Infeasible

__all__ = ["Assignment", "AssignmentProblem", "Infeasible"]
