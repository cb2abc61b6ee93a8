"""Saving and loading a fitted :class:`~recommender.affinity.model.AffinityModel`.

A service scores a venue once and explains pairs later, in other requests or processes:
re-fitting the model for that (TF-IDF over every text, embeddings of every text) costs
seconds to minutes. :func:`save_model` writes what explanations and single scores need —
ids, reviewer offsets, recency weights, TF-IDF and embedding vectors, the standardisation,
the score range, the vocabulary and each publication's id, title and year — into one
directory, as ``.npy`` arrays and string tables; :func:`load_model` maps them back
(``mmap``), so loading takes milliseconds and an explanation reads only its pair's rows.

The directory is written under a temporary name and renamed into place: a reader sees a
complete model or none. A loaded model explains, scores single pairs and rows, and can
score the whole venue again; it cannot embed or vectorise new texts.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from recommender.affinity.model import AffinityModel
from recommender.affinity.options import RunOptions
from recommender.affinity.params import ScoringParams
from recommender.affinity.similarity import Standardiser

FORMAT = 1


@dataclass(frozen=True)
class PublicationRecord:
    """What an explanation shows of a publication (read from a saved model)."""

    id: str
    title: str
    year: int | None


class StringTable(Sequence[str]):
    """Strings stored as one UTF-8 blob plus an offsets array, read by index on demand."""

    def __init__(self, blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]):
        self._blob = blob
        self._offsets = offsets

    @staticmethod
    def write(directory: Path, name: str, strings: Iterable[str]) -> None:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        (directory / f"{name}.bin").write_bytes(b"".join(encoded))
        np.save(directory / f"{name}.offsets.npy", offsets)

    @classmethod
    def read(cls, directory: Path, name: str) -> StringTable:
        path = directory / f"{name}.bin"
        blob = (
            np.memmap(path, dtype=np.uint8, mode="r")
            if path.stat().st_size
            else np.zeros(0, dtype=np.uint8)
        )
        return cls(blob, np.load(directory / f"{name}.offsets.npy", mmap_mode="r"))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start, stop = int(self._offsets[index]), int(self._offsets[index + 1])
        return bytes(self._blob[start:stop]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


class _Publications(Sequence[PublicationRecord]):
    """Publication records of a saved model, decoded on demand."""

    def __init__(self, table: StringTable):
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, index: int) -> PublicationRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[PublicationRecord]: ...

    def __getitem__(self, index: int | slice) -> PublicationRecord | list[PublicationRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        identifier, title, year = json.loads(self._table[index])
        return PublicationRecord(identifier, title, year)


def save_model(model: AffinityModel, directory: str | os.PathLike[str]) -> Path:
    """Write a fitted model into ``directory`` (replaced if present); returns it.

    Scores the venue first when ``combined`` needs the global score range and it is not
    known yet (normally it is: save after :meth:`AffinityModel.affinity`).
    """
    model.check_fitted()
    if model.params.scales_to_unit_range and model.score_range_ is None:
        model.affinity()
    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _write(model, work)
        if target.exists():
            shutil.rmtree(target)
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


def _write(model: AffinityModel, work: Path) -> None:
    arrays: dict[str, npt.NDArray[Any]] = {
        "offsets": model.offsets_,
        "publication_weights": model.publication_weights_,
    }
    for name in ("pub_tfidf_", "sub_tfidf_"):
        matrix = sp.csr_matrix(getattr(model, name))
        for part in ("data", "indices", "indptr"):
            arrays[f"{name.rstrip('_')}.{part}"] = getattr(matrix, part)
    if model.pub_embedding_ is not None and model.sub_embedding_ is not None:
        arrays["pub_embedding"] = model.pub_embedding_
        arrays["sub_embedding"] = model.sub_embedding_
    standardisers = {}
    for name, standardiser in model.standardisers_.items():
        standardisers[name] = {"mean": standardiser.mean, "std": standardiser.std}
        if standardiser.quantiles is not None:
            arrays[f"quantiles.{name}"] = standardiser.quantiles
    for name, array in arrays.items():
        np.save(work / f"{name}.npy", np.ascontiguousarray(array))
    terms = [model.term(i) for i in range(model.pub_tfidf_.shape[1])]
    StringTable.write(work, "terms", terms)
    StringTable.write(
        work,
        "publications",
        (json.dumps([p.id, p.title, p.year], ensure_ascii=False) for p in model.publications_),
    )
    header = {
        "format": FORMAT,
        "params": model.params.to_dict(),
        "paper_ids": list(model.paper_ids_),
        "reviewer_ids": list(model.reviewer_ids_),
        "tfidf_shape": {
            "pub": list(model.pub_tfidf_.shape),
            "sub": list(model.sub_tfidf_.shape),
        },
        "standardisers": standardisers,
        "score_range": list(model.score_range_) if model.score_range_ is not None else None,
        "embedding_identity": model.embedder_.identity if model.embedder_ is not None else None,
    }
    (work / "model.json").write_text(json.dumps(header), encoding="utf-8")


def load_model(
    directory: str | os.PathLike[str], options: RunOptions | None = None
) -> AffinityModel:
    """The fitted model saved in ``directory`` (arrays memory-mapped). ``options``: for
    re-scoring (memory bounds); ValueError if the directory is not a saved model."""
    source = Path(directory)
    try:
        header = json.loads((source / "model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{source}: not a saved affinity model ({error})") from None
    if header.get("format") != FORMAT:
        raise ValueError(f"{source}: saved model format {header.get('format')!r} unsupported")

    def array(name: str) -> npt.NDArray[Any]:
        return np.load(source / f"{name}.npy", mmap_mode="r")

    def csr(name: str) -> sp.csr_matrix:
        shape = tuple(header["tfidf_shape"][name])
        parts = (array(f"{name}_tfidf.{part}") for part in ("data", "indices", "indptr"))
        return sp.csr_matrix(tuple(parts), shape=shape, copy=False)

    model = AffinityModel(ScoringParams.from_dict(header["params"]), options)
    model.paper_ids_ = tuple(header["paper_ids"])
    model.reviewer_ids_ = tuple(header["reviewer_ids"])
    model.publications_ = _Publications(StringTable.read(source, "publications"))
    model.publication_weights_ = array("publication_weights")
    model.tfidf_ = None
    model.embedder_ = None
    model.pub_tfidf_ = csr("pub")
    model.sub_tfidf_ = csr("sub")
    has_embedding = (source / "pub_embedding.npy").is_file()
    model.pub_embedding_ = array("pub_embedding") if has_embedding else None
    model.sub_embedding_ = array("sub_embedding") if has_embedding else None
    model.terms_ = StringTable.read(source, "terms")
    model.standardisers_ = {
        name: Standardiser(
            values["mean"],
            values["std"],
            array(f"quantiles.{name}") if (source / f"quantiles.{name}.npy").is_file() else None,
        )
        for name, values in header["standardisers"].items()
    }
    score_range = header.get("score_range")
    model.score_range_ = tuple(score_range) if score_range is not None else None
    model.offsets_ = np.asarray(array("offsets"))
    model._index()
    return model
