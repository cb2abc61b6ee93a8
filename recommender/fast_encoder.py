"""Faster CPU sentence embeddings: bfloat16 on CPUs with bf16 units, plus ONNX Runtime backends.

Backends (all return float32, L2-normalised, input order, length-sorted batches):

- ``torch``: the sentence-transformers model as is (float32), the reference.
- ``torch-bf16``: the same weights in bfloat16. On CPUs with AMX or AVX512-BF16 units
  (``amx_bf16`` / ``avx512_bf16`` in /proc/cpuinfo) matrix products run on them; cosine to
  float32 > 0.9999 on gold-dev abstracts. Slower than float32 on CPUs without them.
- ``onnx``: the transformer exported to ONNX (torch.onnx, opset 17), run by ONNX Runtime.
- ``onnx-int8``: that export with dynamic int8 quantisation of the MatMul weights (per
  channel; ``onnxruntime.quantization.quantize_dynamic``); cosine to float32 ~0.99.
  Activations are quantised per batch, so a text's vector depends slightly on the other
  texts of its batch (and on ``batch_size``).
- ``auto``: ``torch-bf16`` when the CPU has bf16 units, else ``torch`` (float32). Not
  ``onnx-int8``: its gold-dev loss cost (+0.0095 vs float32) is too high for a default;
  ``torch-bf16`` costs +0.0002.

sentence-transformers' own ONNX backend needs ``optimum-onnx``, whose releases pin
transformers < 4.58 (this project runs transformers 5), so the export is done here with
torch.onnx and plain onnxruntime. Exports are written under ``cache_dir/onnx`` (default
cache: :func:`recommender.embeddings.default_cache_dir`) in a directory named by the model
identity, built in a temporary sibling and renamed into place (atomic: a crash leaves no
half-written model; concurrent exporters race harmlessly). Only local model directories are
read; nothing is downloaded. Supported ONNX architectures: a Transformer + Pooling (mean or
CLS) [+ Normalize] sentence-transformers model (e.g. MiniLM, MPNet, BERT); others raise
ValueError (use torch).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recommender.embeddings import (
    check_model_directory,
    default_cache_dir,
    default_model_path,
    model_identity,
)

FloatMatrix = npt.NDArray[np.float32]

BACKENDS = ("auto", "torch", "torch-bf16", "onnx", "onnx-int8")
_EXPORT_FORMAT = "1"  # bump when the export recipe changes
_LOCK = threading.Lock()


def cpu_flags() -> set[str]:
    """CPU feature flags from /proc/cpuinfo (empty where unavailable)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_bf16_units() -> bool:
    return bool({"amx_bf16", "avx512_bf16"} & cpu_flags())


def choose_backend(backend: str = "auto") -> str:
    """Resolve ``auto`` to the fastest accurate backend for this CPU."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend != "auto":
        return backend
    return "torch-bf16" if has_bf16_units() else "torch"


def _pooling_mode(model_dir: Path) -> str:
    modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
    kinds = [m.get("type", "") for m in modules]
    allowed = ("Transformer", "Pooling", "Normalize")
    if any(not kind.endswith(allowed) for kind in kinds):
        raise ValueError(
            f"{model_dir}: modules {kinds} — the ONNX backend supports Transformer + Pooling "
            "[+ Normalize] models only; use backend='torch' or 'torch-bf16'"
        )
    pooling = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    if pooling is None:
        return "mean"
    config = json.loads((model_dir / pooling["path"] / "config.json").read_text(encoding="utf-8"))
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_mean_tokens", True):
        return "mean"
    raise ValueError(f"{model_dir}: pooling {config} not supported by the ONNX backend")


def onnx_export_dir(model_path: str | os.PathLike[str], cache_dir: str | os.PathLike[str]) -> Path:
    """Where the ONNX export of ``model_path`` lives under ``cache_dir``."""
    import onnxruntime
    import torch

    digest = hashlib.sha256(
        f"{model_identity(model_path)}|{_EXPORT_FORMAT}|{torch.__version__}|"
        f"{onnxruntime.__version__}".encode()
    ).hexdigest()[:24]
    return Path(cache_dir) / "onnx" / digest


def export_onnx(
    model_path: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Export ``model_path``'s transformer to ONNX (float32 and int8), once; returns the dir.

    The directory holds ``model.onnx``, ``model_int8.onnx`` and ``export.json``. Built in a
    temporary directory next to it and renamed into place.
    """
    source = check_model_directory(model_path if model_path is not None else default_model_path())
    target = onnx_export_dir(source, cache_dir if cache_dir is not None else default_cache_dir())
    if (target / "export.json").is_file():
        return target
    _pooling_mode(source)  # fail early on unsupported architectures
    target.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _export_into(source, workdir)
        try:
            os.rename(workdir, target)
        except OSError:
            if not (target / "export.json").is_file():
                raise
            shutil.rmtree(workdir, ignore_errors=True)  # another process won the race
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return target


def _export_into(source: Path, workdir: Path) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from recommender.embeddings import load_model

    model = load_model(source, "cpu")
    transformer = model[0].auto_model.eval()
    tokenizer = model.tokenizer
    sample = tokenizer(["an example sentence", "a second one"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class _Wrapper(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    import warnings

    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Wrapper(transformer),
            tuple(sample[n] for n in names),
            str(workdir / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
        quantize_dynamic(
            str(workdir / "model.onnx"),
            str(workdir / "model_int8.onnx"),
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
    (workdir / "export.json").write_text(
        json.dumps({"source": str(source), "inputs": names, "format": _EXPORT_FORMAT}),
        encoding="utf-8",
    )


class FastEncoder:
    """Encode texts with the chosen backend: ``encode(texts) -> float32 (n, dim)``.

    ``model_path``: local sentence-transformers directory (default bundled MiniLM-L6).
    ``num_threads``: intra-op threads (torch.set_num_threads, a process-wide setting, or the
    ONNX session's); None leaves the library default (all cores). ``batch_size`` texts per
    forward pass, batches formed from length-sorted texts. :attr:`identity` names model and
    backend: use it as the embedding-cache model key (backends give slightly different
    vectors, so they must not share cache entries).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        backend: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        num_threads: int | None = None,
        batch_size: int = 64,
    ):
        self.model_path = check_model_directory(
            model_path if model_path is not None else default_model_path()
        )
        self.backend = choose_backend(backend)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.num_threads = num_threads
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self._model: Any = None
        self._session: Any = None
        self._input_names: list[str] = []
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        if self._identity is None:
            base = model_identity(self.model_path)
            self._identity = base if self.backend == "torch" else f"{base}+{self.backend}"
        return self._identity

    @property
    def dimension(self) -> int:
        self._load()
        getter = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        return int(getter() or 0)

    def _load(self) -> None:
        if self._model is not None:
            return
        with _LOCK:
            if self._model is not None:
                return
            import torch

            if self.num_threads is not None and self.backend.startswith("torch"):
                torch.set_num_threads(self.num_threads)
            from recommender.embeddings import load_model

            dtype = torch.bfloat16 if self.backend == "torch-bf16" else None
            model = load_model(self.model_path, "cpu", dtype=dtype)
            if self.backend.startswith("onnx"):
                self._session, self._input_names = self._onnx_session()
                self._pooling = _pooling_mode(self.model_path)
            self._model = model

    def _onnx_session(self) -> tuple[Any, list[str]]:
        import onnxruntime as ort

        directory = export_onnx(self.model_path, self.cache_dir)
        names = json.loads((directory / "export.json").read_text(encoding="utf-8"))["inputs"]
        file = "model_int8.onnx" if self.backend == "onnx-int8" else "model.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.num_threads is not None:
            options.intra_op_num_threads = self.num_threads
            options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            str(directory / file), options, providers=["CPUExecutionProvider"]
        )
        return session, names

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """float32 (len(texts), dim), L2-normalised, rows in input order."""
        self._load()
        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        max_chars = 8 * int(self._model.max_seq_length or 512)
        order = np.argsort([-min(len(t), max_chars) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            index = order[start : start + self.batch_size]
            out[index] = self._encode_batch([texts[i] for i in index])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _encode_batch(self, batch: list[str]) -> FloatMatrix:
        if self._session is None:
            vectors = self._model.encode(
                batch,
                batch_size=len(batch),
                convert_to_numpy=False,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
            return vectors.float().cpu().numpy()
        features = self._model.tokenizer(
            batch,
            padding=True,
            truncation=True,
            max_length=int(self._model.max_seq_length),
            return_tensors="np",
        )
        feed = {name: features[name].astype(np.int64) for name in self._input_names}
        hidden = self._session.run(None, feed)[0]
        if self._pooling == "cls":
            return hidden[:, 0].astype(np.float32)
        mask = features["attention_mask"][..., None].astype(np.float32)
        return ((hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)).astype(np.float32)
