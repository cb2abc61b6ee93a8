"""One sentence per audit entry (``summary``), so that people read the log, not JSON.

:func:`summarize` takes an entry's action and the detail the caller may see (viewers get
publications reduced to run, version, run replaced and rollback) and never adds what the
detail does not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reviewer_recommender.storage.names import Names

Detail = Mapping[str, Any]


def _run(detail: Detail) -> str:
    number = detail.get("number")
    run = detail.get("assignment_id")
    if number is not None:
        return f"run #{number}"
    return f"run {run}" if run is not None else "a run"


def _pair(detail: Detail, names: Names, reviewer_key: str = "reviewer_id") -> str:
    paper = detail.get("paper_id")
    reviewer = detail.get(reviewer_key)
    title = names.title(paper)
    name = names.name(reviewer)
    paper_words = f"{paper} '{title}'" if title else f"{paper}"
    reviewer_words = f"{name} ({reviewer})" if name and name != reviewer else f"{reviewer}"
    return f"({paper_words}, {reviewer_words})"


def _reason(detail: Detail) -> str:
    reason = str(detail.get("reason") or "").strip()
    return f": {reason}" if reason else ""


def _version(detail: Detail) -> str:
    version = detail.get("version")
    return f", version {version}" if version is not None else ""


def _edit(verb: str) -> Callable[[Detail, Names], str]:
    def words(detail: Detail, names: Names) -> str:
        forced = " over its limits" if detail.get("overfilled") else ""
        where = f"{_run(detail)}{_version(detail)}"
        return f"{verb} {_pair(detail, names)}{forced} in {where}{_reason(detail)}"

    return words


def _swap(detail: Detail, names: Names) -> str:
    paper = detail.get("paper_id")
    title = names.title(paper)
    removed, added = detail.get("removed"), detail.get("added")
    return (
        f"swapped {names.name(removed) or removed} out of {paper}"
        f"{f' {chr(39)}{title}{chr(39)}' if title else ''} for {names.name(added) or added} "
        f"in {_run(detail)}{_version(detail)}{_reason(detail)}"
    )


def _deploy(detail: Detail, _names: Names) -> str:
    words = f"published {_run(detail)}{_version(detail)}"
    if detail.get("rollback"):
        words += " again (a rollback)"
    previous = detail.get("previous_live_id")
    if previous is not None:
        words += f", replacing run {previous}"
    overridden = detail.get("overridden") or []
    if overridden:
        words += (
            f", overriding {len(overridden)} broken constraint{'s' if len(overridden) != 1 else ''}"
        )
    return words


def _skipped(detail: Detail) -> str:
    """What an upload's entry says of the lines it skipped (none: nothing)."""
    skipped = detail.get("skipped_lines")
    return f"; {skipped} bad lines skipped" if skipped else ""


def _count(noun: str, key: str) -> Callable[[Detail, Names], str]:
    def words(detail: Detail, _names: Names) -> str:
        source = detail.get("source")
        return (
            f"uploaded {detail.get(key, 0)} {noun}"
            + (f" from {source}" if source else "")
            + _skipped(detail)
        )

    return words


def _upload(noun: str) -> Callable[[Detail, Names], str]:
    def words(detail: Detail, _names: Names) -> str:
        source = detail.get("source")
        withdrawn = detail.get("withdrawn")
        bare = detail.get("no_publications")
        return (
            f"uploaded {noun}"
            + (f" from {source}" if source else "")
            + f": {detail.get('created', 0)} new, {detail.get('updated', 0)} updated"
            + (f", {withdrawn} not in the file withdrawn" if withdrawn else "")
            + (
                f", {detail.get('left_pool')} not in the file out of the {detail.get('pool')} pool"
                if detail.get("left_pool")
                else ""
            )
            + (f", {bare} without publications" if bare else "")
            + (" (previewed)" if detail.get("previewed") else "")
        )

    return words


def _bids(detail: Detail, _names: Names) -> str:
    source = detail.get("source")
    return (
        f"uploaded {detail.get('bids', 0)} bids"
        + (f" from {source}" if source else "")
        + (_skipped(detail))
    )


def _record(verb: str, noun: str) -> Callable[[Detail, Names], str]:
    def words(detail: Detail, names: Names) -> str:
        record = str(detail.get("id", ""))
        label = names.title(record) if noun == "submission" else names.name(record)
        shown = f"{record} ({label})" if label and label != record else record
        fields = detail.get("fields")
        changed = f": {', '.join(map(str, fields))}" if isinstance(fields, list) else ""
        pairs = detail.get("pairs")
        held = f" (held {pairs} pairs of runs)" if pairs else ""
        return f"{verb} {noun} {shown}{changed}{held}{_reason(detail)}"

    return words


def _leave_pool(detail: Detail, names: Names) -> str:
    person = str(detail.get("id", ""))
    name = names.name(person)
    shown = f"{person} ({name})" if name and name != person else person
    pairs = detail.get("pairs")
    held = f" (their {pairs} draft pairs are to be removed)" if pairs else ""
    return f"took {shown} out of the {detail.get('pool', '')} pool{held}"


def _job_start(detail: Detail, _names: Names) -> str:
    job = detail.get("job_number") or detail.get("job_id")
    rerun = detail.get("rerun_of")
    return f"started job #{job}" + (f" (a rerun of job {rerun})" if rerun is not None else "")


SUMMARIES: dict[str, Callable[[Detail, Names], str]] = {
    "venue.create": lambda d, _n: f"created the venue ({d.get('name', '')})",
    "token.create": lambda d, _n: (
        f"created a {d.get('role', '')} token named {d.get('name', '')!r}"
    ),
    "token.revoke": lambda d, _n: (
        f"revoked token {d.get('token_id')} ({d.get('name', '')}, {d.get('prefix', '')})"
    ),
    "reviewers.upload": _upload("reviewers"),
    "reviewer.edit": _record("edited", "reviewer"),
    "reviewer.withdraw": _record("withdrew", "reviewer"),
    "reviewer.restore": _record("restored", "reviewer"),
    "reviewer.delete": _record("deleted", "reviewer"),
    "reviewer.leave_pool": _leave_pool,
    "submission.edit": _record("edited", "submission"),
    "submission.withdraw": _record("withdrew", "submission"),
    "submission.restore": _record("restored", "submission"),
    "submission.delete": _record("deleted", "submission"),
    "submissions.upload": _upload("submissions"),
    "bids.upload": _bids,
    "constraints.upload": lambda d, _n: (
        f"uploaded constraints from {d.get('source', 'a file')}: {d.get('conflicts', 0)} "
        f"conflicts, {d.get('pins', 0)} new pins{_skipped(d)}"
    ),
    "affinity.upload": lambda d, _n: (
        f"uploaded affinity scores from {d.get('source', 'a file')}: {d.get('pairs', 0)} pairs "
        f"as affinity run {d.get('run_id')} of pool {d.get('pool', 'reviewers')}"
    ),
    "paper_demands.upload": _count("paper demands", "rows"),
    "reviewer_max_loads.upload": _count("reviewer max loads", "rows"),
    "paper_demands.set": lambda d, n: (
        f"set the demand of paper {d.get('paper_id')}"
        + (f" '{n.title(d.get('paper_id'))}'" if n.title(d.get("paper_id")) else "")
        + f" to {d.get('demand')}"
    ),
    "reviewer_max_loads.set": lambda d, n: (
        f"set the max load of {n.name(d.get('reviewer_id')) or d.get('reviewer_id')} to "
        f"{d.get('max_load')}"
    ),
    "paper_demands.delete": lambda d, _n: f"removed the stored demand of paper {d.get('paper_id')}",
    "reviewer_max_loads.delete": lambda d, n: (
        f"removed the stored max load of {n.name(d.get('reviewer_id')) or d.get('reviewer_id')}"
    ),
    "paper_demands.clear": lambda d, _n: f"cleared {d.get('rows', 0)} stored paper demands",
    "reviewer_max_loads.clear": lambda d, _n: (
        f"cleared {d.get('rows', 0)} stored reviewer max loads"
    ),
    "job.cancel": lambda d, _n: f"asked job {d.get('job_id')} to stop",
    "assignment.pin": _edit("pinned"),
    "assignment.unpin": _edit("unpinned"),
    "assignment.forbid": _edit("forbade"),
    "assignment.unforbid": _edit("lifted the forbid of"),
    "assignment.assign": _edit("added"),
    "assignment.remove": _edit("removed"),
    "assignment.swap": _swap,
    "assignment.bulk": lambda d, _n: (
        f"applied {d.get('rows', 0)} bulk changes"
        + (f" from {d.get('source')}" if d.get("source") else "")
        + f" to {_run(d)}{_version(d)} ({d.get('added', 0)} added, {d.get('removed', 0)} removed)"
        + _reason(d)
    ),
    "assignment.undo": lambda d, _n: (
        f"undid edit {d.get('seq')} ({d.get('undone_action', 'an edit')}) of {_run(d)}{_version(d)}"
    ),
    "assignment.deploy": _deploy,
    "assignment.label": lambda d, _n: (
        f"relabelled {_run(d)}"
        + (f": name {d['name'].get('to', '')!r}" if isinstance(d.get("name"), Mapping) else "")
        + ("; note changed" if d.get("note") else "")
    ),
    "pins.delete": lambda d, n: f"removed the pin of {_pair(d, n)}{_reason(d)}",
    "forbids.delete": lambda d, n: f"lifted the forbid of {_pair(d, n)}{_reason(d)}",
}


def summarize(action: str, detail: Detail, names: Names) -> str:
    """One sentence for an audit entry (a generic one for actions without their own)."""
    if action.startswith("job.") and action.endswith(".start"):
        kind = action.split(".")[1]
        return _job_start(detail, names).replace("job #", f"{kind} job #", 1)
    words = SUMMARIES.get(action)
    if words is not None:
        try:
            return words(detail, names)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    shown = ", ".join(f"{k} {v}" for k, v in detail.items() if not isinstance(v, dict | list))
    return f"{action.replace('.', ' ').replace('_', ' ')}" + (f": {shown}" if shown else "")


def named_ids(detail: Detail) -> tuple[list[str], list[str]]:
    """Paper and reviewer ids an entry's summary names."""
    papers = [detail["paper_id"]] if isinstance(detail.get("paper_id"), str) else []
    reviewers = [
        detail[k] for k in ("reviewer_id", "removed", "added") if isinstance(detail.get(k), str)
    ]
    if isinstance(detail.get("id"), str):  # a record's entry: a paper or a person
        papers.append(detail["id"])
        reviewers.append(detail["id"])
    return papers, reviewers
