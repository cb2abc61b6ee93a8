"""Scale-out on Dask: embedding chunks and blockwise paper blocks run as Dask tasks.

:func:`dask_score` is ``recommender score --engine dask``: one cluster embeds the texts
missing from the embedding cache (:class:`DaskTextEncoder`) and scores the paper blocks.

By default an embedded ``distributed.LocalCluster`` is started (``n_workers`` processes of
``threads_per_worker`` threads) and closed afterwards; ``scheduler_address`` (e.g.
``"tcp://scheduler:8786"``) uses an existing cluster instead, and ``client`` an existing
``distributed.Client``. Workers need this package and the model directory at the same path.

Results are identical to the single-process functions: the publication plan is built once
(:func:`recommender.affinity.block_plan.plan_blockwise`) and broadcast to every worker, each
task runs :func:`recommender.affinity.block_scoring.score_paper_block` on one paper block — the
same function and blocks as :func:`recommender.affinity.blockwise.blockwise_affinity` — and
top-K merging is order-independent. Embedding uses the same length-sorted chunks and
encoder settings as the local path (:class:`recommender.profiles.LocalTextEncoder`), so the
vectors (and their embedding-cache entries) are the same.

``progress(fraction, stage)`` is called as tasks finish; it may raise to cancel (pending
tasks are cancelled).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from recommender.affinity.block_plan import BlockPlan
from recommender.affinity.block_scoring import (
    BlockAccumulator,
    BlockResult,
    SparseAffinity,
    paper_block_parts,
    paper_block_ranges,
    score_paper_block,
)
from recommender.affinity.blockwise import prepare_blockwise
from recommender.affinity.model import AffinityModel
from recommender.affinity.options import (
    DENSE_LIMIT_BYTES,
    KEEP_PER_PAPER,
    KEEP_PER_REVIEWER,
    PAPER_BLOCK,
    PUBLICATION_BLOCK,
    RunOptions,
)
from recommender.affinity.params import ScoringParams
from recommender.affinity.result import Affinity
from recommender.affinity.similarity import Channel, Vectors
from recommender.corpus import Reviewer, Submission
from recommender.fast_encoder import FastEncoder
from recommender.profiles import ENCODE_CHUNK, ChunkCallback, LocalTextEncoder
from recommender.progress import ScoringMeter

FloatMatrix = npt.NDArray[np.float32]
Progress = Callable[[float, str], None]

_WORKER_ENCODERS: dict[tuple[Any, ...], FastEncoder] = {}


@contextmanager
def dask_client(
    client: Any = None,
    scheduler_address: str | None = None,
    *,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    processes: bool = True,
) -> Iterator[Any]:
    """Yield a ``distributed.Client``: the given one, one connected to
    ``scheduler_address``, or one on a new LocalCluster (closed on exit)."""
    from distributed import Client, LocalCluster

    if client is not None:
        yield client
        return
    if scheduler_address is not None:
        with Client(scheduler_address) as connected:
            yield connected
        return
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=processes,
            dashboard_address=":0",
            silence_logs=50,  # CRITICAL: task errors surface as exceptions; shutdown races need not
        ) as cluster,
        Client(cluster) as local,
    ):
        yield local


# ------------------------------------------------------------------------ scoring
def _score_block_task(
    plan: BlockPlan, parts: list[tuple[Vectors, Any]], start: int, blas_threads: int | None
) -> BlockResult:
    if blas_threads is None:
        return score_paper_block(plan, parts, start)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=blas_threads):
        return score_paper_block(plan, parts, start)


def dask_blockwise_affinity(
    paper_vectors: Vectors | Sequence[Channel],
    publication_vectors: Vectors | None,
    offsets: npt.ArrayLike,
    *,
    client: Any = None,
    scheduler_address: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    processes: bool = True,
    blas_threads: int | None = None,
    params: ScoringParams | None = None,
    publication_weights: npt.ArrayLike | None = None,
    scale: float = 1.0,
    intercept: float = 0.0,
    k_per_paper: int = KEEP_PER_PAPER,
    k_per_reviewer: int = KEEP_PER_REVIEWER,
    paper_block: int = PAPER_BLOCK,
    publication_block: int = PUBLICATION_BLOCK,
    keep_dense: bool | str = "auto",
    dense_limit_bytes: int = DENSE_LIMIT_BYTES,
    progress: Progress | None = None,
) -> SparseAffinity:
    """:func:`recommender.affinity.blockwise.blockwise_affinity` with one Dask task per
    paper block.

    Same arguments and result; ``blas_threads`` caps BLAS threads inside each task
    (default: ``threads_per_worker`` on an embedded cluster, untouched on a given one);
    ``processes=False``: the embedded cluster's workers are threads of this process.
    """
    report = progress or (lambda fraction, stage: None)
    channels, plan = prepare_blockwise(
        paper_vectors,
        publication_vectors,
        offsets,
        params=params,
        publication_weights=publication_weights,
        scale=scale,
        intercept=intercept,
        k_per_paper=k_per_paper,
        k_per_reviewer=k_per_reviewer,
        paper_block=paper_block,
        publication_block=publication_block,
        keep_dense=keep_dense,
        dense_limit_bytes=dense_limit_bytes,
        report=report,
    )
    n_papers = channels[0].paper_vectors.shape[0]
    embedded = client is None and scheduler_address is None
    threads = (
        blas_threads if blas_threads is not None else (threads_per_worker if embedded else None)
    )
    from distributed import as_completed

    accumulator = BlockAccumulator(plan, n_papers)
    with dask_client(
        client,
        scheduler_address,
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=processes,
    ) as active:
        shared = active.scatter(plan, broadcast=True)
        ranges = list(paper_block_ranges(n_papers, paper_block))
        futures = [
            active.submit(
                _score_block_task,
                shared,
                paper_block_parts(plan, channels, start, stop),
                start,
                threads,
                pure=False,
            )
            for start, stop in ranges
        ]
        # a task reports when it finishes (papers done, rate, time left; time-throttled)
        meter = ScoringMeter(n_papers, len(futures), report)
        meter.update(0.0, 0, force=True)
        scored = 0
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                result = future.result()
                accumulator.add(result)
                future.release()
                scored += result.by_paper.indices.shape[0]
                meter.update(scored / max(n_papers, 1), done, force=done == len(futures))
        except BaseException:
            active.cancel(futures)
            raise
    return accumulator.result(
        {"paper_block": paper_block, "publication_block": publication_block, "engine": "dask"}
    )


def dask_model_affinity(model: AffinityModel, **options: Any) -> Affinity:
    """Score a fitted :class:`~recommender.affinity.model.AffinityModel` on Dask: the same
    :class:`~recommender.affinity.result.Affinity` as ``model.affinity()`` (up to float32
    rounding of the blockwise mix), with the model's run options (full matrix kept when it
    fits ``dense_limit_bytes``, else each side's top pairs). ``options``:
    :func:`dask_blockwise_affinity` keywords (client, scheduler_address, n_workers,
    processes, paper_block, progress...) overriding the model's."""
    result = dask_blockwise_affinity(**{**model.blockwise_options(), **options})
    return model.affinity_from_blockwise(result)


def dask_score(
    reviewers: Sequence[Reviewer],
    submissions: Sequence[Submission],
    params: ScoringParams | None = None,
    options: RunOptions | None = None,
    *,
    client: Any = None,
    scheduler_address: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    processes: bool = True,
    progress: Progress | None = None,
) -> tuple[AffinityModel, Affinity]:
    """Fit and score on one Dask cluster: texts missing from the embedding cache are
    embedded by the workers (:class:`DaskTextEncoder`), then paper blocks are scored
    there. Returns the fitted model (for explanations) and the scores, equal to
    :func:`recommender.affinity.model.compute_affinity`'s up to float32 rounding.
    ``progress(fraction, stage)`` covers both and may raise to cancel."""
    params = params or ScoringParams()
    options = options or RunOptions()
    report = progress or (lambda fraction, stage: None)
    fit_share = 0.85 if params.uses_embedding else 0.4
    with dask_client(
        client,
        scheduler_address,
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=processes,
    ) as active:
        embedded = client is None and scheduler_address is None
        encoder = None
        if params.uses_embedding:
            encoder = DaskTextEncoder(
                active,
                options.model_path(params.model),
                backend=options.encoder_backend,
                batch_size=options.batch_size,
                cache_dir=options.cache_dir,
                num_threads=threads_per_worker if embedded else None,
            )
        model = AffinityModel(params, options, encoder=encoder).fit(
            reviewers, submissions, progress=lambda f, stage: report(fit_share * f, stage)
        )
        affinity = dask_model_affinity(
            model,
            client=active,
            blas_threads=threads_per_worker if embedded else None,
            progress=lambda f, stage: report(fit_share + (1 - fit_share) * f, stage),
        )
    return model, affinity


# ---------------------------------------------------------------------- embedding
def length_sorted_chunks(texts: Sequence[str], chunk_size: int) -> list[npt.NDArray[np.int64]]:
    """Index chunks of ``texts``, longest first, ``chunk_size`` each (the unit of work)."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    order = np.argsort([-len(t) for t in texts], kind="stable").astype(np.int64)
    return [order[i : i + chunk_size] for i in range(0, len(order), chunk_size)]


def _encoder_for(settings: tuple[Any, ...]) -> FastEncoder:
    encoder = _WORKER_ENCODERS.get(settings)
    if encoder is None:
        model_path, backend, cache_dir, num_threads, batch_size = settings
        encoder = FastEncoder(
            model_path,
            backend=backend,
            cache_dir=cache_dir,
            num_threads=num_threads,
            batch_size=batch_size,
        )
        _WORKER_ENCODERS[settings] = encoder
    return encoder


def _encode_task(settings: tuple[Any, ...], texts: list[str]) -> FloatMatrix:
    return _encoder_for(settings).encode(texts)


def _settings(
    model_path: str | os.PathLike[str] | None,
    backend: str,
    cache_dir: str | os.PathLike[str] | None,
    num_threads: int | None,
    batch_size: int,
) -> tuple[Any, ...]:
    return (
        None if model_path is None else str(model_path),
        backend,
        None if cache_dir is None else str(cache_dir),
        num_threads,
        batch_size,
    )


class DaskTextEncoder:
    """A :class:`recommender.profiles.TextEncoder` whose chunks are Dask tasks on
    ``client``: the same chunks, backend and batch size as
    :class:`~recommender.profiles.LocalTextEncoder`, so the same vectors and cache identity
    (``backend="auto"`` is resolved here, not on each worker). At most ``in_flight`` chunks
    are pending at once; when ``on_chunk`` raises, pending chunks are cancelled."""

    def __init__(
        self,
        client: Any,
        model_path: str | os.PathLike[str] | None = None,
        *,
        backend: str = "auto",
        batch_size: int = 32,
        cache_dir: str | os.PathLike[str] | None = None,
        num_threads: int | None = None,
        chunk_size: int = ENCODE_CHUNK,
        in_flight: int = 64,
    ):
        self.client = client
        self.local = LocalTextEncoder(
            model_path, batch_size=batch_size, backend=backend, cache_dir=cache_dir
        )
        self.settings = _settings(
            self.local.model_path, self.local.backend, cache_dir, num_threads, batch_size
        )
        self.chunk_size = chunk_size
        self.in_flight = max(1, in_flight)

    @property
    def identity(self) -> str:
        return self.local.identity

    def dimension(self) -> int:
        return self.local.dimension()

    def encode_chunks(self, texts: list[str], on_chunk: ChunkCallback) -> None:
        from distributed import as_completed

        chunks = iter(length_sorted_chunks(texts, self.chunk_size))
        pending: dict[Any, npt.NDArray[np.int64]] = {}

        def submit() -> None:
            index = next(chunks, None)
            if index is not None:
                future = self.client.submit(
                    _encode_task, self.settings, [texts[i] for i in index], pure=False
                )
                pending[future] = index
                queue.add(future)

        queue = as_completed()
        for _ in range(self.in_flight):
            submit()
        try:
            for future in queue:
                index = pending.pop(future)
                vectors = future.result()
                future.release()
                on_chunk(index, vectors)
                submit()
        except BaseException:
            self.client.cancel(list(pending))
            raise


def encode_in_chunks(
    texts: Sequence[str],
    *,
    model_path: str | os.PathLike[str] | None = None,
    backend: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    num_threads: int | None = None,
    batch_size: int = 64,
    chunk_size: int = 256,
    progress: Progress | None = None,
) -> FloatMatrix:
    """Single-process reference of :func:`dask_encode`: same chunks, same vectors."""
    texts = list(texts)
    settings = _settings(model_path, backend, cache_dir, num_threads, batch_size)
    encoder = _encoder_for(settings)
    out = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    chunks = length_sorted_chunks(texts, chunk_size)
    for number, index in enumerate(chunks, start=1):
        out[index] = encoder.encode([texts[i] for i in index])
        if progress:
            progress(number / len(chunks), f"embedded {number}/{len(chunks)} chunks")
    return out


def dask_encode(
    texts: Sequence[str],
    *,
    client: Any = None,
    scheduler_address: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    model_path: str | os.PathLike[str] | None = None,
    backend: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    num_threads: int | None = None,
    batch_size: int = 64,
    chunk_size: int = 256,
    progress: Progress | None = None,
) -> FloatMatrix:
    """Embed ``texts`` with one Dask task per length-sorted chunk: float32 (n, dim).

    Each worker process loads the encoder once. ``num_threads``: intra-op threads per
    encoder (default on an embedded cluster: ``threads_per_worker``). Export of the ONNX
    model (backends ``onnx*``) happens once per ``cache_dir``; share it between machines or
    export before starting (``recommender.fast_encoder.export_onnx``).
    """
    texts = list(texts)
    embedded = client is None and scheduler_address is None
    threads = num_threads if num_threads is not None else (threads_per_worker if embedded else None)
    settings = _settings(model_path, backend, cache_dir, threads, batch_size)
    chunks = length_sorted_chunks(texts, chunk_size)
    from distributed import as_completed

    with dask_client(
        client, scheduler_address, n_workers=n_workers, threads_per_worker=threads_per_worker
    ) as active:
        futures = {
            active.submit(_encode_task, settings, [texts[i] for i in index], pure=False): index
            for index in chunks
        }
        out: FloatMatrix | None = None
        for done, future in enumerate(as_completed(futures), start=1):
            vectors = future.result()
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[futures[future]] = vectors
            if progress:
                progress(done / len(futures), f"embedded {done}/{len(futures)} chunks")
    if out is None:
        return _encoder_for(settings).encode([])
    return out
