"""Writing results: every file of one result appears together or not at all.

Files are written to temporary names in the target folder and renamed only when all of them
are complete, so an error (or an interrupt) never leaves a half-written output behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from recommender.io.atomic import temporary_beside
from recommender.io.safe_csv import write_frame_csv


def csv_text(frame: pd.DataFrame, *, header: bool = True) -> str:
    """``frame`` as CSV text (no index; floats as Python writes them, so values round-trip;
    text cells spreadsheet-safe, see :mod:`recommender.io.safe_csv`)."""
    text: str = write_frame_csv(frame, None, index=False, header=header, lineterminator="\n")
    return text


def json_text(document: Any) -> str:
    return json.dumps(document, indent=2, allow_nan=False, default=str) + "\n"


Content = str | Callable[[TextIO], None]


def write_files(contents: Mapping[Path, Content]) -> list[Path]:
    """Write every ``path -> content`` atomically as a set (a content is text, or a function
    writing to a text stream, for outputs too large to hold); returns the paths written."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in contents.items():
            handle, temporary = temporary_beside(path)
            staged.append((temporary, path))
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                if isinstance(text, str):
                    stream.write(text)
                else:
                    text(stream)
        for temporary, path in staged:
            os.replace(temporary, path)
    except BaseException:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise
    return [path for _, path in staged]


def beside(path: Path, suffix: str) -> Path:
    """``assignments.csv`` -> ``assignments.<suffix>`` in the same folder."""
    return path.with_name(f"{path.stem}.{suffix}")
