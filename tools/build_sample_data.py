"""Regenerate the bundled sample data in ``data/`` from the project's shared sources.

    python tools/build_sample_data.py [--shared ../shared] [--out data]

- ``data/iclr2026/submissions.json``: the 76 ICLR 2026 abstracts of ``shared/seeds/*.txt``
  in OpenReview's ``submissions.json`` shape, with derived titles (see ``make_title``).
- ``data/demo-reviewers/archives/``: the 27 profiles of ``shared/gold-dev/d_20_1/archives``,
  copied byte for byte.

The output is deterministic; both sets are read back through :mod:`recommender.io`.
The READMEs in ``data/`` are written by hand and not touched here.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from recommender.io import read_openreview_archives, read_submissions  # noqa: E402

SEED_HEADER = "ICLR 2026 Papers"
EXPECTED_SUBMISSIONS = 76
EXPECTED_REVIEWERS = 27
TITLE_MAX_CHARS = 100
PROFILE_DRAW = "d_20_1"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def make_title(abstract: str, max_chars: int = TITLE_MAX_CHARS) -> str:
    """The abstract's first sentence without its final period, cut at a word boundary.

    The seeds carry no titles; this derived stand-in is what the demo shows as a title.
    A cut title ends with an ellipsis.
    """
    first = _SENTENCE_END.split(abstract.strip(), maxsplit=1)[0].rstrip(". ")
    if len(first) <= max_chars:
        return first
    cut = first[: max_chars - 1].rsplit(" ", 1)[0].rstrip(",;: ")
    return f"{cut}…"


def read_seed_abstracts(seed_file: Path) -> list[str]:
    """Paragraphs after the header line, whitespace collapsed."""
    text = seed_file.read_text(encoding="utf-8")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not paragraphs or paragraphs[0] != SEED_HEADER:
        raise SystemExit(f"{seed_file}: expected header line {SEED_HEADER!r}")
    return paragraphs[1:]


def build_submissions(seeds_dir: Path) -> dict[str, dict[str, object]]:
    submissions: dict[str, dict[str, object]] = {}
    for seed_file in sorted(seeds_dir.glob("*.txt")):
        file_index = seed_file.name.split("_", 1)[0]
        for number, abstract in enumerate(read_seed_abstracts(seed_file), start=1):
            paper_id = f"iclr2026-{file_index}-{number:02d}"
            submissions[paper_id] = {
                "id": paper_id,
                "content": {
                    "title": make_title(abstract),
                    "abstract": abstract,
                    "source": f"{seed_file.name}#{number}",
                },
            }
    if len(submissions) != EXPECTED_SUBMISSIONS:
        raise SystemExit(f"expected {EXPECTED_SUBMISSIONS} abstracts, found {len(submissions)}")
    return submissions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO_ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "data")
    args = parser.parse_args(argv)

    submissions_path = args.out / "iclr2026" / "submissions.json"
    submissions_path.parent.mkdir(parents=True, exist_ok=True)
    submissions = build_submissions(args.shared / "seeds")
    submissions_path.write_text(
        json.dumps(submissions, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )

    source_archives = args.shared / "gold-dev" / PROFILE_DRAW / "archives"
    archives = args.out / "demo-reviewers" / "archives"
    if archives.exists():
        shutil.rmtree(archives)
    archives.mkdir(parents=True)
    for archive in sorted(source_archives.glob("*.jsonl")):
        shutil.copyfile(archive, archives / archive.name)

    loaded_submissions = read_submissions(submissions_path)
    loaded_reviewers = read_openreview_archives(archives)
    if len(loaded_submissions) != EXPECTED_SUBMISSIONS:
        raise SystemExit(f"read back {len(loaded_submissions)} submissions")
    if len(loaded_reviewers) != EXPECTED_REVIEWERS:
        raise SystemExit(f"expected {EXPECTED_REVIEWERS} reviewers, read {len(loaded_reviewers)}")
    publications = sum(len(r.publications) for r in loaded_reviewers)
    print(f"{submissions_path}: {len(loaded_submissions)} submissions")
    print(f"{archives}: {len(loaded_reviewers)} reviewers, {publications} publications")


if __name__ == "__main__":
    main()
