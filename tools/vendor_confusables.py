"""Write ``recommender/unicode_data/confusables.txt`` from Unicode's ``confusables.txt``
(UTS #39 security data): its header (version, copyright, terms) and each mapping as
``SOURCE<TAB>TARGET`` code points in hex, comments dropped (a fifth of the size).

The vendored file came from Unicode 16.0.0's ``confusables.txt`` as shipped in ICU 76.1's
sources (``icu/source/data/unidata/confusables.txt`` in Debian's ``icu`` source package);
the Unicode License v3 beside it covers it. To move to a newer version:

    python tools/vendor_confusables.py path/to/confusables.txt
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "recommender" / "unicode_data" / "confusables.txt"
MAPPING = re.compile(r"^([0-9A-F]{4,6})\s*;\s*([0-9A-F ]+?)\s*;\s*MA\b")


def compact(source: str) -> str:
    header: list[str] = []
    mappings: list[str] = []
    for line in source.splitlines():
        line = line.lstrip("\ufeff")
        if line.startswith("#") and not mappings and line.strip() != "#":
            header.append(line)
            continue
        match = MAPPING.match(line)
        if match:
            mappings.append(f"{match.group(1)}\t{' '.join(match.group(2).split())}")
    if not mappings:
        raise SystemExit("no mappings found: is this Unicode's confusables.txt?")
    note = [
        "# Compacted by tools/vendor_confusables.py: SOURCE<TAB>TARGET code points (hex),",
        "# comments dropped. Terms: LICENSE-UNICODE.txt beside this file.",
    ]
    return "\n".join([*header, *note, *mappings]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("confusables", type=Path, help="Unicode's confusables.txt")
    args = parser.parse_args()
    TARGET.write_text(compact(args.confusables.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
