"""Reading a question for search (retrieval.query): restored, expanded, split into its parts."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.query import prepare_query, question_vector, split_question
from retrieval.restore.ngrams import NgramCounts
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.text.vocabulary import load_text_processor

processor = load_text_processor()


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Xin chào, cho em hỏi bao nhiêu chỉ tiêu, bao nhiêu ngành, học phí ra sao "
            "và học ở đâu?",
            [
                "Xin chào, cho em hỏi bao nhiêu chỉ tiêu",
                "bao nhiêu ngành",
                "học phí ra sao",
                "và học ở đâu?",
            ],
        ),
        (
            "Học phí ngành CNTT là bao nhiêu? Đóng khi nào ạ?",
            ["Học phí ngành CNTT là bao nhiêu?", "Đóng khi nào ạ?"],
        ),
        (
            "Em chào anh chị ạ. Trường có ký túc xá không ạ, giá bao nhiêu một tháng?",
            ["Trường có ký túc xá không ạ", "giá bao nhiêu một tháng?"],
        ),
        (
            "liên thông học ở đâu v ạ, có học buổi tối k",
            ["liên thông học ở đâu v ạ", "có học buổi tối k"],
        ),
    ],
)
def test_a_question_that_asks_several_things_is_split(question: str, parts: list[str]) -> None:
    assert split_question(question, processor) == parts


@pytest.mark.parametrize(
    "question",
    [
        "cho e hỏi hp ngành cntt bn 1 năm v ad",  # one thing, in chat shorthand
        "Cảm ơn ad nhiều ạ!",
        "Xin chào, cho em hỏi học phí ngành CNTT là bao nhiêu?",  # a greeting is not a part
        # commas inside a clause: "bản sao" is not "sao?", "Người nào" asks nothing
        "Việc cấp bản sao văn bằng, chứng chỉ từ sổ gốc được thực hiện khi nào?",
        "Người nào làm, tàng trữ, vận chuyển tiền giả thì bị phạt tù bao nhiêu năm?",
        "Học phí ngành Khoa học máy tính, Kỹ thuật máy tính là bao nhiêu?",
    ],
)
def test_a_question_that_asks_one_thing_stays_whole(question: str) -> None:
    assert split_question(question, processor) == [question]


def test_a_prepared_question_carries_its_restored_form_terms_and_parts() -> None:
    restorer = DiacriticRestorer(
        NgramCounts().add_texts(["Học phí ngành Công nghệ Thông tin. Ký túc xá ở cơ sở 2."]),
        processor.dense_expansions,
    )
    prepared = prepare_query("hoc phi nganh cntt bao nhieu, ky tuc xa o dau", processor, restorer)
    assert prepared.restored == "học phí ngành cntt bao nhiêu, ký túc xá ở đâu"
    assert [p.text for p in prepared.parts] == ["học phí ngành cntt bao nhiêu", "ký túc xá ở đâu"]
    assert prepared.parts[0].dense == "học phí ngành Công nghệ Thông tin bao nhiêu"
    assert prepared.dense_texts == [p.dense for p in prepared.parts]
    # keyword terms are folded: the same whether the question was restored or not
    assert prepared.terms == tuple(
        processor.query_terms("hoc phi nganh cntt bao nhieu, ky tuc xa o dau")
    )


def test_a_question_with_marks_is_not_restored_and_not_split_when_asked_so() -> None:
    prepared = prepare_query("Học phí bao nhiêu? Đóng khi nào?", processor, None, split=False)
    assert prepared.restored is None
    assert prepared.parts == ()
    assert prepared.dense_texts == ["Học phí bao nhiêu? Đóng khi nào?"]


def test_the_question_vector_of_parts_is_their_normalised_mean() -> None:
    prepared = prepare_query("Học phí bao nhiêu? Đóng khi nào?", processor)
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    whole = question_vector(prepared, vectors)
    assert np.allclose(whole, [2**-0.5, 2**-0.5])
    single = prepare_query("Học phí bao nhiêu?", processor)
    assert np.allclose(question_vector(single, vectors[:1]), [1.0, 0.0])
