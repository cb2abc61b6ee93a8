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
- :mod:`reviewer_recommender.services.exports`: outputs written all together or not at all;
- :mod:`reviewer_recommender.services.pair_rules`: a venue's stored pair constraints read by
  the one violation vocabulary (:mod:`matching.violations`) and the one rule of whether a pair
  can be added (:mod:`matching.additions`);
- :mod:`reviewer_recommender.services.pair_uploads`: bids and pair constraints uploaded to a
  venue.

One rule, one home: what a bid means is :mod:`recommender.bids`; which hard constraints an
assignment breaks is :func:`matching.check_assignment` (:class:`matching.Violation`); whether a
pair may be added is :func:`matching.additions.addition_obstacles`; how a solve's options are
validated is :func:`reviewer_recommender.services.assignment.validate_options` (one
:class:`matching.OptionError`).
"""
