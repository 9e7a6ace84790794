"""The service's answers read the same whether orjson or the standard library wrote them."""

import json

import pytest

from scrapy_neardup.serve import jsonbody

ANSWER = {
    "verdict": "duplicate",
    "chars": 57,
    "duplicate_of": "退款-1",
    "similar": [
        {
            "key": "退款-1",
            "similarity": 0.8352,
            "jaccard": 1e-05,
            "duplicate": True,
            "similar_id": 2**40,
            "text": "退款申请提交后，款项将在三到五个工作日内原路退回。\n\t“引号”\u2028\x00\\/",
            "passages": [{"text": [0, 7], "entry": [0, 7]}],
            "shared_chars": 56,
            "relative_of": None,
        }
    ],
}


@pytest.fixture(params=["orjson", "standard library"])
def writer(request, monkeypatch):
    if request.param == "orjson":
        pytest.importorskip("orjson")
    else:
        monkeypatch.setattr(jsonbody, "orjson", None)
    return request.param


def test_an_answer_is_compact_utf8_json_of_the_same_values(writer):
    data = jsonbody.encode(ANSWER)
    assert json.loads(data.decode("utf-8")) == ANSWER
    assert "退款申请".encode() in data and b", " not in data.replace("，".encode(), b"")


def test_what_orjson_does_not_write_is_written_as_before(writer):
    """A lone surrogate (a key sent as the escape \\ud800) and an integer past 64 bits."""
    for answer in ({"key": "a\ud800b", "added": True}, {"count": 2**70}):
        data = jsonbody.encode(answer)
        assert json.loads(data.decode("utf-8")) == answer
