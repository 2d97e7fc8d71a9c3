"""The keyed cassette server the real-corpus answers were recorded with: a known prompt gets its
answer through the real ``openai`` client, an unknown one is saved and answered 404."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openai
import pytest

from tests.teacher.keyed_server import key_of, serve_keyed

CORPUS = Path(__file__).parent / "cassettes" / "real" / "corpus"


def test_a_recorded_prompt_is_answered_and_an_unknown_one_is_saved(tmp_path: Path) -> None:
    prompt = next((CORPUS / "prompts").glob("*.json"))
    body = json.loads(prompt.read_text())
    assert key_of(body) == prompt.stem  # the files are named by the key they answer
    shutil.copytree(CORPUS / "answers", tmp_path / "answers")
    with serve_keyed(tmp_path) as url:
        client = openai.OpenAI(base_url=url, api_key="sk-test-keyed-0123456789", max_retries=0)
        got = client.chat.completions.create(model=body["model"], messages=body["messages"])
        assert got.choices[0].message.content
        assert (
            got.choices[0].message.content
            == json.loads((CORPUS / "answers" / prompt.name).read_text())["choices"][0]["message"][
                "content"
            ]
        )
        unknown = [{"role": "user", "content": "a prompt nobody answered"}]
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="gpt-5", messages=unknown)
    saved = list((tmp_path / "prompts").glob("*.json"))
    assert [p.stem for p in saved] == [key_of({"messages": unknown})]
