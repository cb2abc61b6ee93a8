"""Use cases shared by every face (command line, HTTP routers, job handlers).

Faces parse their own syntax into the typed parameters of
:mod:`reviewer_recommender.services.params` and call
one function per use case; the services call the domain packages (:mod:`recommender`,
:mod:`matching`) and never a face (``api``, ``cli``).

- :func:`reviewer_recommender.services.problem.build_problem` /
:func:`reviewer_recommender.services.assignment.solve_assignment` /
  :func:`reviewer_recommender.services.assignment.assign`: the assignment (conflicts, pins, bids,
  loads, demand,
  side constraints, solver choice, statistics);
- :func:`reviewer_recommender.services.conflicts.detect_conflicts`: conflicts of interest from
profiles;
- :func:`reviewer_recommender.services.scoring.score`: affinity scores, bids folded, Not Willing
  pairs excluded, conflicts detected, top-K kept (the CLI's ``score`` and ``demo`` and the
  affinity job, through :mod:`reviewer_recommender.services.affinity_store`);
- :mod:`reviewer_recommender.services.assignment_store`: a solve of a stored venue (the
  assignment job);
- :mod:`reviewer_recommender.services.edits`: pins, forbids and swaps as constraints that survive
re-solves;
- :mod:`reviewer_recommender.services.exports`: outputs written all together or not at all.
"""
