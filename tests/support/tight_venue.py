"""A tight little venue for the repairs tests (HTTP and Chromium): three papers, four
reviewers, one paper each; two papers want the same reviewer, so the best total leaves one
of them below its own best and a repair (a swap chain) can raise it."""

from __future__ import annotations

from typing import Any

# 3 papers, 4 reviewers, one paper each: the two language-and-image reviewers are wanted by
# two papers each, so the best total leaves a paper below its own best
PARAMS = {"reviewers_per_paper": 1, "max_load": 1, "solver": "flow"}


def _person(rid: str, text: str) -> dict[str, Any]:
    return {
        "id": f"~{rid}",
        "name": rid.rstrip("1").replace("_", " "),
        "publications": [{"title": text, "abstract": text, "year": 2024}],
    }


REVIEWERS = [
    _person("Ann_Atom1", "molecule graph network chemistry"),
    _person("Bea_Both1", "molecule graph image chemistry network"),
    _person("Cai_Cross1", "image segmentation text language"),
    _person("Dan_Dict1", "language translation speech dialogue grammar"),
]
SUBMISSIONS = [
    {"id": "P1", "title": "molecule graph network", "abstract": "molecule graph"},
    {"id": "P2", "title": "image segmentation", "abstract": "image segmentation"},
    {"id": "P3", "title": "text language", "abstract": "text language"},
]
