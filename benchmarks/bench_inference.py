"""Embedding throughput and quality: FastEncoder backends vs plain SentenceTransformer.encode.

Texts: every unique publication and rated paper of gold-dev (real abstracts). For each
backend, all texts are embedded once (timed), in the order plain, backends..., plain again
(the two plain runs bound drift from other load on the machine; the ratio uses their mean).
Quality: cosine to the float32 vectors, agreement of the per-rater score order, and the
gold-dev pairwise loss (recommender.evaluate.pairwise_loss, mean over the 10 draws) of
embedding-only affinity (aggregation = ScoringParams default: top-3 mean).

    python -m benchmarks.bench_inference [--gold /work/shared/gold-dev] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch

from recommender.affinity import ScoringParams, aggregate
from recommender.embeddings import default_model_path, load_model
from recommender.evaluate import gold_draws, pairwise_loss, read_gold_ratings
from recommender.fast_encoder import FastEncoder, cpu_flags
from recommender.io import read_openreview_archives, read_submissions


def _gold_corpora(gold_dir: Path):
    return [
        (read_openreview_archives(d / "archives"), read_submissions(d / "submissions.json"))
        for d in gold_draws(gold_dir)
    ]


def _gold_loss(corpora, gold, vectors: dict[str, np.ndarray], config: ScoringParams):
    losses, orders = [], []
    for reviewers, submissions in corpora:
        pub_vectors = np.stack([vectors[p.text] for r in reviewers for p in r.publications])
        sub_vectors = np.stack([vectors[s.text] for s in submissions])
        counts = [len(r.publications) for r in reviewers]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        scores = aggregate(sub_vectors @ pub_vectors.T, offsets, config)
        sub_index = {s.id: i for i, s in enumerate(submissions)}
        predicted = {}
        for r, reviewer in enumerate(reviewers):
            if reviewer.id in gold:
                predicted[reviewer.id] = {
                    paper: float(scores[sub_index[paper], r]) for paper in gold[reviewer.id]
                }
                orders.append([predicted[reviewer.id][p] for p in sorted(gold[reviewer.id])])
        draw_gold = {r: v for r, v in gold.items() if r in predicted}
        losses.append(pairwise_loss(predicted, draw_gold))
    return float(np.mean(losses)), orders


def _rank_agreement(first: list[list[float]], second: list[list[float]]) -> float:
    """Share of (rater, paper pair) orders that agree between two score sets."""
    agree = total = 0
    for a, b in zip(first, second, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        da = np.sign(a[:, None] - a[None, :])
        db = np.sign(b[:, None] - b[None, :])
        upper = np.triu_indices(len(a), 1)
        agree += int((da[upper] == db[upper]).sum())
        total += len(upper[0])
    return agree / max(total, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=Path("/work/shared/gold-dev"))
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--backends", default="torch-bf16,onnx-int8")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N texts")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    corpora = _gold_corpora(args.gold)
    gold = read_gold_ratings(args.gold / "evaluations.tsv")
    texts = list(
        dict.fromkeys(
            [p.text for reviewers, _ in corpora for r in reviewers for p in r.publications]
            + [s.text for _, submissions in corpora for s in submissions]
        )
    )
    if args.limit:
        texts = texts[: args.limit]
    words = [len(t.split()) for t in texts]
    flags = cpu_flags()
    print(
        f"{len(texts)} unique gold-dev texts, median {int(np.median(words))} words; "
        f"torch threads {torch.get_num_threads()}, cores {os.cpu_count()}, "
        f"bf16 units: {sorted(flags & {'amx_bf16', 'avx512_bf16'})}, "
        f"vnni: {'avx512_vnni' in flags}, load {os.getloadavg()[0]:.2f}"
    )
    model = load_model(default_model_path())
    model.encode(texts[:16], batch_size=32)

    def plain() -> np.ndarray:
        return model.encode(
            texts,
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    encoders = {
        name: FastEncoder(backend=name, cache_dir=args.cache_dir, num_threads=args.threads)
        for name in args.backends.split(",")
    }
    for encoder in encoders.values():
        encoder.encode(texts[:16])  # load, export on first use, warm up
    timings: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    vectors["plain"] = plain()
    first_plain = time.perf_counter() - started
    for name, encoder in encoders.items():
        started = time.perf_counter()
        vectors[name] = encoder.encode(texts)
        timings[name] = time.perf_counter() - started
    started = time.perf_counter()
    plain()
    second_plain = time.perf_counter() - started
    plain_seconds = (first_plain + second_plain) / 2
    config = ScoringParams(method="embedding")
    base_loss, base_orders = (
        _gold_loss(corpora, gold, dict(zip(texts, vectors["plain"], strict=True)), config)
        if not args.limit
        else (float("nan"), [])
    )
    print(
        f"{'backend':12s} {'texts/s':>8s} {'x plain':>8s} {'cos min':>8s} {'cos mean':>9s} "
        f"{'gold loss':>9s} {'d loss':>7s} {'order agree':>11s}"
    )
    print(
        f"{'plain fp32':12s} {len(texts) / plain_seconds:8.1f} {1.0:8.2f} {1.0:8.4f} "
        f"{1.0:9.5f} {base_loss:9.4f} {0.0:7.4f} {1.0:11.4f}   "
        f"(runs {first_plain:.1f}s, {second_plain:.1f}s)"
    )
    for name in encoders:
        cosine = (vectors[name] * vectors["plain"]).sum(axis=1)
        loss, orders = (float("nan"), [])
        agreement = float("nan")
        if not args.limit:
            loss, orders = _gold_loss(
                corpora, gold, dict(zip(texts, vectors[name], strict=True)), config
            )
            agreement = _rank_agreement(base_orders, orders)
        print(
            f"{name:12s} {len(texts) / timings[name]:8.1f} {plain_seconds / timings[name]:8.2f} "
            f"{cosine.min():8.4f} {cosine.mean():9.5f} {loss:9.4f} {loss - base_loss:7.4f} "
            f"{agreement:11.4f}"
        )


if __name__ == "__main__":
    main()
