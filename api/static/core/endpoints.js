// Every URL the page calls, in one place: tools/page_api_doc.py reads this file and the calls
// of the views to write docs/page-api.md. Pure: unit-tested under `node --test`.

const q = encodeURIComponent;
const V = (venue) => `/venues/${q(venue)}`;
const A = (venue, run) => `${V(venue)}/assignments/${q(run)}`;

export const EP = {
  me: () => "/me",
  venues: () => "/venues",
  venue: (v) => V(v),

  // data
  upload: (v, kind) => `${V(v)}/${kind}/upload`,
  reviewers: (v) => `${V(v)}/reviewers`,
  reviewer: (v, r) => `${V(v)}/reviewers/${q(r)}`,
  submissions: (v) => `${V(v)}/submissions`,
  submission: (v, p) => `${V(v)}/submissions/${q(p)}`,
  previewReviewers: (v) => `${V(v)}/reviewers/upload/preview`,
  previewSubmissions: (v) => `${V(v)}/submissions/upload/preview`,
  withdrawReviewer: (v, r) => `${V(v)}/reviewers/${q(r)}/withdraw`,
  restoreReviewer: (v, r) => `${V(v)}/reviewers/${q(r)}/restore`,
  reviewerPool: (v, r, pool) => `${V(v)}/reviewers/${q(r)}/pools/${q(pool)}`,
  withdrawSubmission: (v, p) => `${V(v)}/submissions/${q(p)}/withdraw`,
  restoreSubmission: (v, p) => `${V(v)}/submissions/${q(p)}/restore`,
  searchPapers: (v) => `${V(v)}/search/papers`,
  searchReviewers: (v) => `${V(v)}/search/reviewers`,
  capacity: (v) => `${V(v)}/capacity`,
  maxLoad: (v, r) => `${V(v)}/reviewer-max-loads/${q(r)}`,

  // jobs
  jobs: (v) => `${V(v)}/jobs`,
  job: (v, id) => `${V(v)}/jobs/${q(id)}`,
  cancelJob: (v, id) => `${V(v)}/jobs/${q(id)}/cancel`,
  rerunJob: (v, id) => `${V(v)}/jobs/${q(id)}/rerun`,

  // scores
  startAffinity: (v) => `${V(v)}/affinity/jobs`,
  uploadAffinity: (v) => `${V(v)}/affinity/upload`,
  estimateAffinity: (v) => `${V(v)}/affinity/estimate`,
  affinityModels: (v) => `${V(v)}/affinity/models`,
  latestAffinity: (v) => `${V(v)}/affinity`,
  pair: (v, p, r) => `${V(v)}/affinity/pairs/${q(p)}/${q(r)}`,
  paperReviewers: (v, p) => `${V(v)}/papers/${q(p)}/reviewers`,
  reviewerPapers: (v, r) => `${V(v)}/reviewers/${q(r)}/papers`,
  conflicts: (v) => `${V(v)}/conflicts`,
  conflictPolicy: (v) => `${V(v)}/conflict-policy`,
  conflictPolicyPreview: (v) => `${V(v)}/conflict-policy/preview`,
  dismissConflict: (v, p, r) => `${V(v)}/conflicts/${q(p)}/${q(r)}/dismiss`,
  restoreConflict: (v, p, r) => `${V(v)}/conflicts/${q(p)}/${q(r)}/restore`,
  dismissedConflicts: (v) => `${V(v)}/conflicts/dismissed`,
  bidsOverview: (v) => `${V(v)}/bids/overview`,

  // runs
  assignments: (v) => `${V(v)}/assignments`,
  startAssignmentWithMaxPapers: (v) => `${V(v)}/assignments/with-max-papers`,
  assignment: (v, a) => A(v, a),
  assignmentPairs: (v, a) => `${A(v, a)}/pairs`,
  assignmentStats: (v, a) => `${A(v, a)}/stats`,
  assignmentPaper: (v, a, p) => `${A(v, a)}/papers/${q(p)}`,
  check: (v, a) => `${A(v, a)}/check`,
  deploy: (v, a) => `${A(v, a)}/deploy`,
  exportAssignment: (v, a) => `${A(v, a)}/export`,
  resolve: (v, a) => `${A(v, a)}/resolve`,
  paperEdges: (v, a, p) => `${A(v, a)}/papers/${q(p)}/edges`,
  reviewerEdges: (v, a, r) => `${A(v, a)}/reviewers/${q(r)}/edges`,
  paperRepairs: (v, a, p) => `${A(v, a)}/papers/${q(p)}/repairs`,
  paperRepairPreview: (v, a, p) => `${A(v, a)}/papers/${q(p)}/repairs/preview`,
  paperRepair: (v, a, p) => `${A(v, a)}/papers/${q(p)}/repairs`,
  reoptimise: (v, a) => `${A(v, a)}/reoptimise`,
  runPapers: (v, a) => `${A(v, a)}/papers`,
  runReviewers: (v, a) => `${A(v, a)}/reviewers`,
  runBids: (v, a) => `${A(v, a)}/bids`,
  runHistogram: (v, a) => `${A(v, a)}/histogram`,
  compare: (v, a, b) => `${A(v, a)}/compare/${q(b)}`,
  comparePairs: (v, a, b) => `${A(v, a)}/compare/${q(b)}/pairs`,
  randomness: (v, a) => `${A(v, a)}/randomness`,
  reassignLive: (v) => `${V(v)}/assignments/live/reassign`,
  comparePapers: (v, a, b) => `${A(v, a)}/compare/${q(b)}/papers`,
  compareReviewers: (v, a, b) => `${A(v, a)}/compare/${q(b)}/reviewers`,

  // changes of a draft: one edit body for every action, previewed before it applies
  editPreview: (v, a) => `${A(v, a)}/edits/preview`,
  edits: (v, a) => `${A(v, a)}/edits`,
  undo: (v, a) => `${A(v, a)}/undo`,
  bulkPreview: (v, a) => `${A(v, a)}/bulk/preview`,
  bulkApply: (v, a) => `${A(v, a)}/bulk/apply`,
  pins: (v) => `${V(v)}/pins`,
  forbids: (v) => `${V(v)}/forbids`,
  venuePin: (v, p, r) => `${V(v)}/pins/${q(p)}/${q(r)}`,
  venueForbid: (v, p, r) => `${V(v)}/forbids/${q(p)}/${q(r)}`,
  runRules: (v, a) => `${A(v, a)}/rules`,
  promoteRules: (v, a) => `${A(v, a)}/rules/promote`,

  audit: (v) => `${V(v)}/audit`,

  // a person's own view (reviewer and area chair tokens)
  venueMe: (v) => `${V(v)}/me`,
  myPapers: (v) => `${V(v)}/me/papers`,
  myCandidates: (v) => `${V(v)}/me/candidates`,
  myPair: (v, p) => `${V(v)}/me/pairs/${q(p)}`,
  myBid: (v, p) => `${V(v)}/me/bids/${q(p)}`,
  myDecline: (v, p) => `${V(v)}/me/papers/${q(p)}/decline`,

  // the chairs' side of it: bidding, coverage, declines, person tokens, levels
  bidCoveragePapers: (v) => `${V(v)}/bids/coverage/papers`,
  bidCoveragePersons: (v) => `${V(v)}/bids/coverage/persons`,
  declines: (v) => `${V(v)}/declines`,
  reassignDeclines: (v) => `${V(v)}/declines/reassign`,
  venueTokens: (v) => `${V(v)}/tokens`,
  revokeVenueToken: (v, id) => `${V(v)}/tokens/${q(id)}/revoke`,
  paperChairs: (v) => `${V(v)}/chairs`,
};
