"""The OpenAI-compatible chat client against a local fake endpoint: answers, errors, retries, cache."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers import LoopbackHandler, LoopbackServer

from factscout.errors import FactscoutError, InputError
from factscout.plan.llm import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ChatClient, LlmError, cache_key, strip_reasoning

CANNED = "1. Is voting fraud widespread in the US?\n2. Is mail-in voting riskier than in-person voting?"
MESSAGES = [{"role": "system", "content": "You are a fact-checker."}, {"role": "user", "content": "Claim: X"}]


class _Handler(LoopbackHandler):
    server: FakeLlm

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        fake = self.server
        fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "json": request})
        mode = fake.script.pop(0) if fake.script else "ok"
        if mode == "slow":
            fake.release.wait(5.0)
            mode = "ok"
        if mode == "ok":
            content = fake.answer(request) if callable(fake.answer) else fake.answer
            body = {
                "id": "x",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            }
            self._send(200, json.dumps(body).encode())
        elif mode == "malformed":
            self._send(200, b'{"choices": [ this is not json', "text/plain")
        elif mode == "no_choices":
            self._send(200, json.dumps({"id": "x", "object": "chat.completion"}).encode())
        elif mode == "no_content":
            self._send(200, json.dumps({"choices": [{"message": {"role": "assistant"}}]}).encode())
        elif mode == "429":
            self._send(429, b'{"error": {"message": "slow down"}}', retry_after="7")
        elif mode.isdigit():
            self._send(int(mode), json.dumps({"error": {"message": f"fake error {mode}"}}).encode())
        else:
            raise AssertionError(f"unknown fake mode {mode!r}")


class FakeLlm(LoopbackServer):
    """An OpenAI chat endpoint on 127.0.0.1 that follows a per-test script of behaviours."""

    def __init__(self) -> None:
        super().__init__(_Handler)
        self.script: list[str] = []
        self.answer: str | Callable[[dict[str, Any]], str] = CANNED

    @property
    def url(self) -> str:
        return f"{self.base}/v1"


@pytest.fixture
def llm_server() -> Iterator[FakeLlm]:
    server = FakeLlm()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm_sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(llm_server: FakeLlm, llm_sleeps: list[float], tmp_path) -> Callable[..., ChatClient]:
    def make(**options: Any) -> ChatClient:
        options = {"model": "fake-model", "cache_dir": tmp_path, "timeout": 5.0, "sleep": llm_sleeps.append} | options
        return ChatClient(options.pop("base_url", llm_server.url), **options)

    return make


def test_answer_is_the_first_choice_text(llm_server, make_client):
    client = make_client(api_key="sk-test", temperature=0.0)
    assert client.complete(MESSAGES) == CANNED
    (request,) = llm_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer sk-test"
    assert request["json"] == {"model": "fake-model", "messages": MESSAGES, "temperature": 0.0}


def test_one_string_is_one_user_message(llm_server, make_client):
    make_client(use_cache=False).complete("Is it?")
    assert llm_server.requests[0]["json"]["messages"] == [{"role": "user", "content": "Is it?"}]
    assert llm_server.requests[0]["auth"] is None


def test_full_completions_url_is_accepted(llm_server, make_client):
    client = make_client(base_url=llm_server.url + "/chat/completions/")
    assert client.url == llm_server.url + "/chat/completions"
    assert client.complete(MESSAGES) == CANNED


@pytest.mark.parametrize(
    ("mode", "says"),
    [("malformed", "non-JSON"), ("no_choices", "without 'choices'"), ("no_content", "without text 'content'")],
)
def test_malformed_answers_raise_a_clear_error_without_retry(llm_server, make_client, llm_sleeps, mode, says):
    llm_server.script = [mode]
    client = make_client()
    with pytest.raises(LlmError, match=says) as info:
        client.complete(MESSAGES)
    assert client.url in str(info.value)
    assert isinstance(info.value, FactscoutError)
    assert len(llm_server.requests) == 1 and llm_sleeps == []


def test_server_error_is_retried_with_exponential_backoff(llm_server, make_client, llm_sleeps):
    llm_server.script = ["500", "503", "ok"]
    assert make_client(backoff=0.5).complete(MESSAGES) == CANNED
    assert len(llm_server.requests) == 3
    assert llm_sleeps == [0.5, 1.0]


def test_rate_limit_waits_as_the_server_asks(llm_server, make_client, llm_sleeps):
    llm_server.script = ["429", "ok"]
    assert make_client().complete(MESSAGES) == CANNED
    assert llm_sleeps == [7.0]


def test_client_error_is_not_retried(llm_server, make_client, llm_sleeps):
    llm_server.script = ["400"]
    with pytest.raises(LlmError, match=r"refused the request \(HTTP 400\): fake error 400"):
        make_client().complete(MESSAGES)
    assert len(llm_server.requests) == 1 and llm_sleeps == []


def test_not_found_hints_at_the_base_url(llm_server, make_client):
    llm_server.script = ["404"]
    with pytest.raises(LlmError, match=ENV_BASE_URL):
        make_client().complete(MESSAGES)


def test_persistent_server_errors_give_up_after_max_retries(llm_server, make_client, llm_sleeps):
    llm_server.script = ["502"] * 10
    with pytest.raises(LlmError, match=r"failed after 3 attempt\(s\): HTTP 502"):
        make_client(max_retries=2).complete(MESSAGES)
    assert len(llm_server.requests) == 3 and len(llm_sleeps) == 2


def test_timeout_is_retried_then_reported(llm_server, make_client, llm_sleeps):
    llm_server.script = ["slow"] * 10
    with pytest.raises(LlmError, match=r"failed after 3 attempt\(s\): no answer within 0.2 s"):
        make_client(timeout=0.2, max_retries=2).complete(MESSAGES)
    assert len(llm_sleeps) == 2


def test_connection_refused_is_reported(llm_server, make_client, llm_sleeps):
    client = make_client(max_retries=1)
    llm_server.stop()
    with pytest.raises(LlmError, match="connection failed"):
        client.complete(MESSAGES)
    assert len(llm_sleeps) == 1


def test_cache_answers_without_the_endpoint(llm_server, make_client, tmp_path):
    client = make_client(max_retries=0)
    assert client.complete(MESSAGES) == CANNED
    path = client.cache_path(MESSAGES)
    assert path.parent == tmp_path / "llm" and path.name == f"{cache_key('fake-model', MESSAGES, 0.1)}.json"
    assert json.loads(path.read_text())["content"] == CANNED
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary files left
    llm_server.stop()
    assert client.complete(MESSAGES) == CANNED
    # the key ignores the endpoint: another URL serving the same model reuses the answer
    moved = make_client(base_url="http://127.0.0.1:9/v1", max_retries=0)
    assert moved.complete(MESSAGES) == CANNED
    with pytest.raises(LlmError):  # other messages miss the cache and need the (stopped) endpoint
        client.complete([*MESSAGES[:1], {"role": "user", "content": "Claim: Y"}])
    assert len(llm_server.requests) == 1


def test_cache_key_depends_on_model_messages_and_temperature():
    base = cache_key("m", MESSAGES, 0.1)
    assert base == cache_key("m", [dict(m) for m in MESSAGES], 0.1)
    assert base != cache_key("m2", MESSAGES, 0.1)
    assert base != cache_key("m", MESSAGES, 0.0)
    assert base != cache_key("m", MESSAGES[:1], 0.1)


def test_corrupt_cache_entry_is_ignored_and_rewritten(llm_server, make_client):
    client = make_client()
    path = client.cache_path(MESSAGES)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert client.complete(MESSAGES) == CANNED
    assert json.loads(path.read_text())["content"] == CANNED


def test_use_cache_false_always_asks(llm_server, make_client):
    client = make_client(use_cache=False)
    client.complete(MESSAGES)
    client.complete(MESSAGES)
    assert len(llm_server.requests) == 2
    assert not client.cache_path(MESSAGES).exists()


def test_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BASE_URL, "http://llm.example:8000/v1/")
    monkeypatch.setenv(ENV_MODEL, "some-model")
    monkeypatch.setenv(ENV_API_KEY, "secret")
    client = ChatClient.from_env(temperature=0.0, cache_dir=tmp_path)
    assert client.url == "http://llm.example:8000/v1/chat/completions"
    assert (client.model, client.api_key, client.temperature) == ("some-model", "secret", 0.0)
    assert ChatClient.from_env(model="other").model == "other"


def test_unconfigured_endpoint_is_a_clear_error(monkeypatch):
    for name in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(InputError, match=f"no LLM endpoint configured: set {ENV_BASE_URL}"):
        ChatClient.from_env()
    monkeypatch.setenv(ENV_BASE_URL, "http://localhost:8000/v1")
    with pytest.raises(InputError, match=ENV_MODEL):
        ChatClient.from_env()


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"base_url": "localhost:8000"}, "http"),
        ({"model": " "}, "model"),
        ({"temperature": 3}, "temperature"),
        ({"timeout": 0}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_bad_settings_are_rejected(options, says):
    options = {"base_url": "http://localhost:8000/v1", "model": "m"} | options
    with pytest.raises(InputError, match=says):
        ChatClient(options.pop("base_url"), **options)


@pytest.mark.parametrize("bad", [[], [{"role": "user"}], [{"role": "user", "content": 3}], None])
def test_bad_messages_are_rejected(bad, tmp_path):
    client = ChatClient("http://127.0.0.1:9/v1", model="m", cache_dir=tmp_path)
    with pytest.raises(InputError, match="message"):
        client.complete(bad)


def test_strip_reasoning():
    assert strip_reasoning("<think>hmm?\nIs it?</think>\n1. Is X true?") == "\n1. Is X true?"
    assert strip_reasoning("<think>never closed") == ""
