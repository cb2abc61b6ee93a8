"""Profilers: turn texts (title + abstract) into L2-normalised vectors, scikit-learn style.

Vocabulary policy for :class:`TfidfProfiler`: the vocabulary and IDF are fitted on the texts
of *one venue* — every reviewer publication plus every submission — so a term's weight
reflects how discriminative it is among the papers actually being matched. Refit when the
venue's corpus changes; vectors from different fits are not comparable.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
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

# Words of 2+ characters starting with a letter; keeps "bert", "gpt-3"-style tokens split at
# the hyphen, drops bare numbers (years, table values) that carry no topic.
TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w]+\b"


class TfidfProfiler:
    """Sparse TF-IDF vectors (sublinear tf, English stop words, L2-normalised rows).

    ``min_df``/``max_df`` follow scikit-learn (int = document count, float = fraction).
    """

    def __init__(
        self,
        *,
        ngram_range: tuple[int, int] = (1, 1),
        min_df: int | float = 1,
        max_df: int | float = 0.5,
        sublinear_tf: bool = True,
        stop_words: str | None = "english",
    ):
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
        return TfidfVectorizer(
            lowercase=True,
            strip_accents="unicode",
            token_pattern=TOKEN_PATTERN,
            stop_words=self.stop_words,
            ngram_range=self.ngram_range,
            min_df=min_df,
            max_df=max_df,
            sublinear_tf=self.sublinear_tf,
            norm="l2",
            dtype=np.float32,
        )

    def _fit(self, texts: Sequence[str], *, keep_vectors: bool) -> sp.csr_matrix | None:
        vectorizer = self._vectorizer(len(texts))
        self.empty_ = False
        vectors = None
        try:
            if keep_vectors:
                vectors = sp.csr_matrix(vectorizer.fit_transform(list(texts)), dtype=np.float32)
            else:
                vectorizer.fit(list(texts))
        except ValueError as error:
            # No texts, or nothing but stop words/numbers: every vector is zero (no evidence).
            if texts and "empty vocabulary" not in str(error):
                raise
            self.empty_ = True
            vectors = sp.csr_matrix((len(texts), 0), dtype=np.float32)
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

    def fit_transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """``fit(texts).transform(texts)`` with each text tokenised once (half the work)."""
        vectors = self._fit(texts, keep_vectors=True)
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


class EmbeddingProfiler:
    """Dense sentence embeddings, float32 (n, dim), L2-normalised.

    ``model_path``: a local sentence-transformers directory (default: the bundled
    all-MiniLM-L6-v2). ``backend``: a :mod:`recommender.fast_encoder` backend on CPU
    (``auto`` = bfloat16 where the CPU has bf16 units, else float32 torch); on another
    ``device`` (e.g. ``cuda``) the float32 sentence-transformers model runs there and
    ``backend`` must be ``auto`` or ``torch``. Encoders are loaded lazily, once per process.
    With a ``cache``, only texts not yet stored under :attr:`identity` (model *and* backend:
    backends give slightly different vectors, so they never share entries) are encoded;
    ``n_encoded`` counts texts actually run through the model. ``fit`` is a no-op.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        cache: EmbeddingCache | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        backend: str = "auto",
    ):
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.cache = cache
        self.batch_size = batch_size
        self.device = device
        if device != "cpu":
            if backend not in ("auto", "torch"):
                raise ValueError(
                    f"encoder backend {backend!r} runs on CPU only; use 'torch' on {device!r}"
                )
            self.backend = "torch"
        else:
            self.backend = choose_backend(backend)
        self.n_encoded = 0
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        """Cache key of the vectors: the model identity, plus the backend unless float32."""
        if self._identity is None:
            if self.device == "cpu":
                self._identity = _fast_encoder(
                    self.model_path, self.backend, self.batch_size
                ).identity
            else:
                self._identity = model_identity(self.model_path)
        return self._identity

    def fit(self, texts: Sequence[str] | None = None) -> EmbeddingProfiler:
        return self

    def _encode(self, texts: list[str], on_chunk: ChunkCallback) -> int:
        """Encode ``texts`` in length-sorted chunks; returns the embedding dimension."""
        if self.device != "cpu":
            model = load_model(self.model_path, self.device)
            encode_sorted(model, texts, self.batch_size, on_chunk=on_chunk)
            return embedding_dimension(model)
        encoder = _fast_encoder(self.model_path, self.backend, self.batch_size)
        # Chunks bound the memory of one encode call and let the cache keep finished work.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), _ENCODE_CHUNK):
            index = order[start : start + _ENCODE_CHUNK]
            on_chunk(index, encoder.encode([texts[i] for i in index]))
        return encoder.dimension

    def transform(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        texts = list(texts)
        keys = [text_key(t) for t in texts]
        known = self.cache.get(self.identity, keys) if self.cache is not None else {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in known and key not in missing:
                missing[key] = text
        if missing:
            missing_keys = list(missing)

            def store(index: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
                chunk = {missing_keys[i]: v for i, v in zip(index, vectors, strict=True)}
                if self.cache is not None:
                    self.cache.put(self.identity, chunk)
                known.update(chunk)

            self._encode(list(missing.values()), store)
            self.n_encoded += len(missing)
        if not texts:
            if self.device != "cpu":
                dim = embedding_dimension(load_model(self.model_path, self.device))
            else:
                dim = _fast_encoder(self.model_path, self.backend, self.batch_size).dimension
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([known[k] for k in keys]).astype(np.float32, copy=False)

    def fit_transform(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.transform(texts)


ChunkCallback = Callable[[npt.NDArray[np.int64], npt.NDArray[np.float32]], None]
_ENCODE_CHUNK = 1024
_ENCODERS: dict[tuple[str, str, int], FastEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def _fast_encoder(model_path: Path, backend: str, batch_size: int) -> FastEncoder:
    """One FastEncoder per (model, backend, batch size) and process (loading costs seconds)."""
    key = (str(model_path), backend, batch_size)
    with _ENCODERS_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = FastEncoder(model_path, backend=backend, batch_size=batch_size)
            _ENCODERS[key] = encoder
    return encoder
