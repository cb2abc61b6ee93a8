"""Profilers: turn texts (title + abstract) into L2-normalised vectors, scikit-learn style.

Vocabulary policy for :class:`TfidfProfiler`: the vocabulary and IDF are fitted on the texts
of *one venue* — every reviewer publication plus every submission — so a term's weight
reflects how discriminative it is among the papers actually being matched. Refit when the
venue's corpus changes; vectors from different fits are not comparable.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.feature_extraction.text import TfidfVectorizer

from recommender.embeddings import (
    EmbeddingCache,
    default_model_path,
    embedding_dimension,
    encode_sorted,
    load_model,
    model_identity,
    text_key,
)
from recommender.fast_encoder import FastEncoder, choose_backend
from recommender.progress import REPORT_SECONDS, TextProgress, TextProgressMeter

# Words of 2+ characters starting with a letter; keeps "bert", "gpt-3"-style tokens split at
# the hyphen, drops bare numbers (years, table values) that carry no topic.
TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w]+\b"
_UNICODE_TOKEN = re.compile(TOKEN_PATTERN)
# The same pattern with ASCII classes: identical on ASCII text, and faster.
_ASCII_TOKEN = re.compile(r"(?a)\b[^\W\d_][\w]+\b")

PARALLEL_MIN_TEXTS = 50_000
"""Below this many texts TF-IDF counting stays in one process (starting workers costs more)."""
COUNT_SHARE_TEXTS = 10_000
"""Texts counted between two TF-IDF progress reports on a large venue (when one is asked)."""


def tokenize(text: str) -> list[str]:
    """The tokens of :data:`TOKEN_PATTERN` in ``text`` (already lowercased)."""
    return (_ASCII_TOKEN if text.isascii() else _UNICODE_TOKEN).findall(text)


class _CountingVectorizer(TfidfVectorizer):
    """scikit-learn's TfidfVectorizer whose term counting (the per-token Python loop) runs
    in ``workers`` processes on large inputs; every other step is scikit-learn's own.

    The merged counts are exactly scikit-learn's: each worker counts a contiguous share of
    the texts with the parent class's ``_count_vocab``; the vocabulary is numbered by first
    appearance as one pass would number it (the first share's terms, then the new terms of
    the next share in their order of appearance...), and rows are sorted by that number,
    as one pass sorts them. So vocabulary, IDF and vectors do not depend on ``workers``.
    """

    workers = 1
    # progress(texts counted, texts in all): with it, a large input is counted in shares of
    # COUNT_SHARE_TEXTS texts (in order, ``workers`` at a time), reported as each ends
    progress: Callable[[int, int], None] | None = None

    def _count_vocab(self, raw_documents: Any, fixed_vocab: bool) -> tuple[dict[str, int], Any]:
        documents = list(raw_documents)
        stepped = self.progress is not None
        if fixed_vocab or len(documents) < PARALLEL_MIN_TEXTS or (self.workers < 2 and not stepped):
            return super()._count_vocab(documents, fixed_vocab)
        n_shares = self.workers
        if stepped:
            n_shares = max(n_shares, -(-len(documents) // COUNT_SHARE_TEXTS))
        shares = np.array_split(np.arange(len(documents)), n_shares)
        parts = [documents[int(share[0]) : int(share[-1]) + 1] for share in shares if share.size]
        settings = self.get_params()
        # joblib's loky processes: fresh interpreters (no fork of a threaded process, no
        # re-import of the caller's __main__), reused across calls; shares come back in order.
        counted = []
        done = 0
        for part, result in zip(
            parts,
            Parallel(n_jobs=min(max(self.workers, 1), len(parts)), return_as="generator")(
                delayed(_count_share)(settings, part) for part in parts
            ),
            strict=True,
        ):
            counted.append(result)
            done += len(part)
            if self.progress is not None:
                self.progress(done, len(documents))
        return self._merge_counts(counted, sum(len(part) for part in parts))

    def _merge_counts(
        self, counted: list[tuple[list[str], Any, Any, Any]], n_documents: int
    ) -> tuple[dict[str, int], Any]:
        vocabulary: dict[str, int] = {}
        indices, data, lengths = [], [], []
        for terms, share_indices, share_indptr, share_data in counted:
            for term in terms:
                vocabulary.setdefault(term, len(vocabulary))
            numbers = np.fromiter((vocabulary[t] for t in terms), np.int64, count=len(terms))
            indices.append(numbers[share_indices])
            data.append(share_data)
            lengths.append(np.diff(share_indptr))
        nnz = sum(len(part) for part in indices)
        index_dtype = np.int64 if nnz > np.iinfo(np.int32).max else np.int32
        indptr = np.zeros(n_documents + 1, dtype=index_dtype)
        np.cumsum(np.concatenate(lengths), out=indptr[1:])
        counts = sp.csr_array(
            (np.concatenate(data), np.concatenate(indices).astype(index_dtype), indptr),
            shape=(n_documents, len(vocabulary)),
            dtype=self.dtype,
        )
        counts.sort_indices()
        return vocabulary, _sklearn_sparse(counts)


def _count_share(settings: dict[str, Any], documents: list[str]) -> tuple[list[str], Any, Any, Any]:
    """Term counts of ``documents`` by scikit-learn's own loop: (terms in order of first
    appearance, CSR indices, indptr, data)."""
    vectorizer = TfidfVectorizer(**settings)
    vocabulary, counts = TfidfVectorizer._count_vocab(vectorizer, documents, False)
    counts = sp.csr_array(counts)
    return list(vocabulary), counts.indices, counts.indptr, counts.data


def _sklearn_sparse(matrix: Any) -> Any:
    """The sparse container scikit-learn's own ``_count_vocab`` returns in this version."""
    try:
        from sklearn.feature_extraction.text import _align_api_if_sparse
    except ImportError:  # versions before sparse-array support return csr_matrix
        return sp.csr_matrix(matrix)
    return _align_api_if_sparse(matrix)


class TfidfProfiler:
    """Sparse TF-IDF vectors (sublinear tf, English stop words, L2-normalised rows).

    ``min_df``/``max_df`` follow scikit-learn (int = document count, float = fraction).
    ``workers``: processes that count terms when fitting on at least
    :data:`PARALLEL_MIN_TEXTS` texts (same vectors whatever the number).
    """

    def __init__(
        self,
        *,
        ngram_range: tuple[int, int] = (1, 1),
        min_df: int | float = 1,
        max_df: int | float = 0.5,
        sublinear_tf: bool = True,
        stop_words: str | None = "english",
        workers: int = 1,
    ):
        self.workers = workers
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_df = max_df
        self.sublinear_tf = sublinear_tf
        self.stop_words = stop_words
        self.vectorizer_: TfidfVectorizer | None = None
        self.empty_ = False

    def fit(self, texts: Sequence[str]) -> TfidfProfiler:
        """Learn vocabulary and IDF from ``texts`` (the venue's publications + submissions)."""
        self._fit(texts, keep_vectors=False)
        return self

    def _vectorizer(self, n_texts: int) -> TfidfVectorizer:
        min_df, max_df = self.min_df, self.max_df
        if isinstance(max_df, float) and n_texts < 20:
            max_df = 1.0  # a fraction of a handful of texts would drop everything
        vectorizer = _CountingVectorizer(
            lowercase=True,
            strip_accents="unicode",
            tokenizer=tokenize,
            token_pattern=None,
            stop_words=self.stop_words,
            ngram_range=self.ngram_range,
            min_df=min_df,
            max_df=max_df,
            sublinear_tf=self.sublinear_tf,
            norm="l2",
            dtype=np.float32,
        )
        vectorizer.workers = self.workers
        return vectorizer

    def _fit(
        self,
        texts: Sequence[str],
        *,
        keep_vectors: bool,
        progress: Callable[[int, int], None] | None = None,
    ) -> sp.csr_matrix | None:
        vectorizer = self._vectorizer(len(texts))
        vectorizer.progress = progress
        self.empty_ = False
        vectors = None
        try:
            if keep_vectors:
                vectors = sp.csr_matrix(vectorizer.fit_transform(list(texts)), dtype=np.float32)
            else:
                vectorizer.fit(list(texts))
        except ValueError as error:
            # No texts, nothing but stop words/numbers, or min_df/max_df that keep no term
            # on this corpus: every vector is zero (no TF-IDF evidence).
            if texts and not any(
                reason in str(error)
                for reason in ("empty vocabulary", "no terms remain", "< documents than min_df")
            ):
                raise
            self.empty_ = True
            vectors = sp.csr_matrix((len(texts), 0), dtype=np.float32)
        finally:
            vectorizer.progress = None  # not kept with a fitted (saved, pickled) vectorizer
        self.vectorizer_ = vectorizer
        return vectors

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """CSR float32 (n_texts, n_terms); empty or out-of-vocabulary texts are zero rows."""
        if self.vectorizer_ is None:
            raise RuntimeError("TfidfProfiler.transform called before fit")
        if self.empty_:
            return sp.csr_matrix((len(texts), 0), dtype=np.float32)
        if not texts:
            return sp.csr_matrix((0, len(self.vectorizer_.vocabulary_)), dtype=np.float32)
        return sp.csr_matrix(self.vectorizer_.transform(list(texts)), dtype=np.float32)

    def fit_transform(
        self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None
    ) -> sp.csr_matrix:
        """``fit(texts).transform(texts)`` with each text tokenised once (half the work).
        ``progress(texts counted, texts in all)``: on :data:`PARALLEL_MIN_TEXTS` texts or
        more, called as every :data:`COUNT_SHARE_TEXTS` texts are counted (the bulk of the
        work; same vectors); it may raise to cancel."""
        vectors = self._fit(texts, keep_vectors=True, progress=progress)
        assert vectors is not None
        return vectors

    @property
    def terms(self) -> npt.NDArray[np.str_]:
        """Vocabulary terms in column order."""
        if self.vectorizer_ is None:
            raise RuntimeError("TfidfProfiler not fitted")
        if self.empty_:
            return np.array([], dtype=str)
        return self.vectorizer_.get_feature_names_out()


ChunkCallback = Callable[[npt.NDArray[np.int64], npt.NDArray[np.float32]], None]
Progress = Callable[[float, str], None]

ENCODE_CHUNK = 256
"""Most texts embedded between two progress reports (and cancel points); on CPU each chunk
is sized from the measured rate to take about
:data:`recommender.progress.REPORT_SECONDS`."""


MIN_CHUNK = 8
"""Fewest texts per chunk when chunks are sized by time (see ``LocalTextEncoder``)."""


class TextEncoder(Protocol):
    """What embeds texts for an :class:`EmbeddingProfiler`: this process
    (:class:`LocalTextEncoder`) or a cluster (:class:`recommender.distributed.DaskTextEncoder`).

    ``identity``: the embedding-cache key of its vectors. ``encode_chunks(texts, on_chunk)``
    embeds ``texts`` in chunks, calling ``on_chunk(indices, vectors)`` after each (vectors
    float32, L2-normalised; ``on_chunk`` may raise to stop). ``dimension()``: vector size.
    """

    @property
    def identity(self) -> str: ...

    def dimension(self) -> int: ...

    def encode_chunks(self, texts: list[str], on_chunk: ChunkCallback) -> None: ...


class LocalTextEncoder:
    """Embeds texts in this process: a :mod:`recommender.fast_encoder` backend on CPU, the
    float32 sentence-transformers model on another ``device``. The model is loaded on the
    first text to embed, not before (a fully cached venue never loads it)."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 32,
        device: str = "cpu",
        backend: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        chunk_size: int = ENCODE_CHUNK,
    ):
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.batch_size = batch_size
        self.device = device
        self.cache_dir = cache_dir
        self.chunk_size = chunk_size
        if device != "cpu":
            if backend not in ("auto", "torch"):
                raise ValueError(
                    f"encoder backend {backend!r} runs on CPU only; use 'torch' on {device!r}"
                )
            self.backend = "torch"
        else:
            self.backend = choose_backend(backend)
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """Cache key of the vectors: the model identity, plus the backend unless float32."""
        if self._identity is None:
            if self.device == "cpu":
                self._identity = self._fast().identity
            else:
                self._identity = model_identity(self.model_path)
        return self._identity

    def _fast(self) -> FastEncoder:
        return _fast_encoder(self.model_path, self.backend, self.batch_size, self.cache_dir)

    def dimension(self) -> int:
        if self.device != "cpu":
            return embedding_dimension(load_model(self.model_path, self.device))
        return self._fast().dimension

    def encode_chunks(self, texts: list[str], on_chunk: ChunkCallback) -> None:
        """Length-sorted chunks of ``chunk_size`` texts (bounded memory, a progress report
        and a cancel point after each)."""
        if self.device != "cpu":
            model = load_model(self.model_path, self.device)
            encode_sorted(
                model, texts, self.batch_size, chunk_size=self.chunk_size, on_chunk=on_chunk
            )
            return
        encoder = self._fast()
        if texts:
            _ = encoder.dimension  # load the model now: its seconds are no embedding rate
        order = np.argsort([-len(t) for t in texts], kind="stable")
        # Chunks sized from the measured rate to take about REPORT_SECONDS each, so that
        # progress and cancel points come every few seconds even with a slow model: from
        # MIN_CHUNK texts (batches smaller than that would cost throughput) to chunk_size;
        # the first is one batch.
        smallest = min(MIN_CHUNK, self.batch_size, self.chunk_size)
        size = min(self.batch_size, self.chunk_size)
        start = 0
        while start < len(texts):
            index = order[start : start + size]
            began = time.monotonic()
            on_chunk(index, encoder.encode([texts[i] for i in index]))
            start += len(index)
            took = time.monotonic() - began
            rate = len(index) / took if took > 0 else float(self.chunk_size)
            size = int(max(smallest, min(self.chunk_size, rate * REPORT_SECONDS)))


class EmbeddingProfiler:
    """Dense sentence embeddings, float32 (n, dim), L2-normalised.

    ``model_path``: a local sentence-transformers directory (default: the bundled
    all-MiniLM-L6-v2). ``backend``: a :mod:`recommender.fast_encoder` backend on CPU
    (``auto`` = bfloat16 where the CPU has bf16 units, else float32 torch); on another
    ``device`` (e.g. ``cuda``) the float32 sentence-transformers model runs there and
    ``backend`` must be ``auto`` or ``torch``. ``encoder``: embeds the texts instead (e.g.
    on a Dask cluster); it must compute the same vectors. Encoders are loaded lazily, once
    per process. With a ``cache``, only texts not yet stored under :attr:`identity` (model
    *and* backend: backends give slightly different vectors, so they never share entries)
    are encoded; ``n_encoded`` counts texts actually run through the model. ``fit`` is a
    no-op.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        cache: EmbeddingCache | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        backend: str = "auto",
        encoder: TextEncoder | None = None,
    ):
        self.cache = cache
        self.encoder: TextEncoder = encoder or LocalTextEncoder(
            model_path,
            batch_size=batch_size,
            device=device,
            backend=backend,
            cache_dir=cache.directory if cache is not None else None,
        )
        self.n_encoded = 0
        self.last_progress: TextProgress | None = None

    @property
    def identity(self) -> str:
        """Cache key of the vectors (see :class:`TextEncoder`)."""
        return self.encoder.identity

    def fit(self, texts: Sequence[str] | None = None) -> EmbeddingProfiler:
        return self

    def transform(
        self, texts: Sequence[str], *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """float32 (len(texts), dim). ``progress(fraction, stage)``: after every chunk
        embedded, fraction = texts embedded / texts to embed (cached ones excluded); it may
        raise to cancel (chunks done so far stay in the cache)."""
        texts = list(texts)
        keys = [text_key(t) for t in texts]
        known = self.cache.get(self.identity, keys) if self.cache is not None else {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in known and key not in missing:
                missing[key] = text
        if missing:
            missing_keys = list(missing)
            done = [0]
            meter = TextProgressMeter(len(missing_keys))

            def store(index: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
                chunk = {missing_keys[i]: v for i, v in zip(index, vectors, strict=True)}
                if self.cache is not None:
                    self.cache.put(self.identity, chunk)
                known.update(chunk)
                done[0] += len(index)
                if progress is not None:
                    progress(done[0] / len(missing_keys), meter.stage(done[0]))

            if progress is not None:
                progress(0.0, meter.stage(0))
            self.encoder.encode_chunks(list(missing.values()), store)
            self.n_encoded += len(missing)
            self.last_progress = meter.update(done[0])
            if self.cache is not None:
                self.cache.record_rate(self.identity, done[0], self.last_progress.elapsed_seconds)
        if not texts:
            return np.zeros((0, self.encoder.dimension()), dtype=np.float32)
        return np.stack([known[k] for k in keys]).astype(np.float32, copy=False)

    def fit_transform(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.transform(texts)


_ENCODERS: dict[tuple[str, str, int, str], FastEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def _fast_encoder(
    model_path: Path, backend: str, batch_size: int, cache_dir: str | os.PathLike[str] | None
) -> FastEncoder:
    """One FastEncoder per (model, backend, batch size, cache) and process (loading costs
    seconds)."""
    key = (str(model_path), backend, batch_size, str(cache_dir))
    with _ENCODERS_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = FastEncoder(
                model_path, backend=backend, batch_size=batch_size, cache_dir=cache_dir
            )
            _ENCODERS[key] = encoder
    return encoder
