"""A small client for OpenAI-compatible chat endpoints, with an on-disk answer cache.

The LLM planners (:mod:`factscout.plan.claimdecomp`, :mod:`factscout.plan.programfc`) prompt a
chat model the way ClaimDecomp (Chen et al. 2022) and ProgramFC (Pan et al. 2023) prompted
GPT-3 / Codex. Any server that speaks the OpenAI chat completions API works: vLLM, llama.cpp's
server, Ollama, LM Studio, TGI or OpenAI itself (``POST {base_url}/chat/completions``).

Configuration comes from arguments or from the environment:

``FACTSCOUT_LLM_BASE_URL``
    the API root, e.g. ``http://localhost:8000/v1``
``FACTSCOUT_LLM_MODEL``
    the model name the server knows, e.g. ``meta-llama/Llama-3.1-8B-Instruct``
``FACTSCOUT_LLM_API_KEY``
    sent as ``Authorization: Bearer ...`` when set

Every answer is cached under ``$FACTSCOUT_CACHE/llm/<sha256>.json``, keyed by the model, the
messages and the temperature (not the endpoint URL, so moving a model to another server keeps
its cache). A rerun of an experiment therefore gives the same queries and needs no running
endpoint. :class:`LlmPlanner` is the planner plumbing they share (client, settings, plan).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from factscout.errors import FactscoutError, InputError
from factscout.plan.base import finalize
from factscout.records import Claim, Query

log = logging.getLogger(__name__)

ENV_BASE_URL = "FACTSCOUT_LLM_BASE_URL"
ENV_API_KEY = "FACTSCOUT_LLM_API_KEY"
ENV_MODEL = "FACTSCOUT_LLM_MODEL"
CACHE_FOLDER = "llm"
_CACHE_VERSION = 1
_MAX_BACKOFF_S = 60.0

Message = Mapping[str, str]


class LlmError(FactscoutError):
    """An LLM endpoint failed, refused the request or answered something unusable."""


def cache_key(model: str, messages: Sequence[Message], temperature: float) -> str:
    """The sha256 that names a cached answer: model, messages and temperature, nothing else."""
    payload = {
        "model": model,
        "messages": [dict(m) for m in messages],
        "temperature": float(temperature),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _check_messages(messages: str | Sequence[Message]) -> list[dict[str, str]]:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence) or not messages:
        raise InputError(f"messages must be a non-empty list of {{'role', 'content'}} dicts, got {messages!r}")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise InputError(f"message {i} must have string 'role' and 'content', got {m!r}")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def _snippet(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(max(float(value), 0.0), _MAX_BACKOFF_S) if value is not None else None
    except ValueError:
        return None


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` and returns the first choice's text.

    Timeouts, connection errors, 429 and 5xx answers are retried ``max_retries`` times with
    exponential backoff (``backoff``, ``2*backoff``, ... seconds, or the server's
    ``Retry-After``); other 4xx answers and malformed answers raise :class:`LlmError` at once.
    ``sleep`` is injectable so tests need not wait. Answers are cached on disk (see the module
    docstring) unless ``use_cache=False``; ``cache_dir=None`` means
    :func:`factscout.nn.backend.cache_dir` (``$FACTSCOUT_CACHE``).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        model: str,
        temperature: float = 0.1,
        timeout: float = 30.0,
        max_retries: int = 3,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://\S+$", base_url.strip()):
            raise InputError(f"LLM base_url must be an http(s) URL like http://localhost:8000/v1, got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise InputError(f"LLM model must be a non-empty string, got {model!r} (set {ENV_MODEL})")
        if not 0.0 <= float(temperature) <= 2.0:
            raise InputError(f"LLM temperature must be in [0, 2], got {temperature!r}")
        if not float(timeout) > 0:
            raise InputError(f"LLM timeout must be > 0 seconds, got {timeout!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"LLM max_retries must be an integer >= 0, got {max_retries!r}")
        if backoff < 0:
            raise InputError(f"LLM backoff must be >= 0 seconds, got {backoff!r}")
        base = base_url.strip().rstrip("/")
        self.base_url = base
        self.url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self.api_key = api_key or None
        self.model = model.strip()
        self.temperature = float(temperature)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.use_cache = use_cache
        self._cache_root = Path(cache_dir) if cache_dir is not None else None
        self._sleep = sleep

    @classmethod
    def from_env(cls, **overrides: Any) -> ChatClient:
        """A client configured from ``FACTSCOUT_LLM_*``; keyword ``overrides`` win over the env."""
        base_url = overrides.pop("base_url", None) or os.environ.get(ENV_BASE_URL, "").strip()
        model = overrides.pop("model", None) or os.environ.get(ENV_MODEL, "").strip()
        api_key = overrides.pop("api_key", None) or os.environ.get(ENV_API_KEY, "").strip() or None
        if not base_url:
            raise InputError(
                f"no LLM endpoint configured: set {ENV_BASE_URL} (e.g. http://localhost:8000/v1) and {ENV_MODEL} "
                f"(and {ENV_API_KEY} if the server needs one), or pass a ChatClient to the planner"
            )
        if not model:
            raise InputError(
                f"no LLM model configured for {base_url}: set {ENV_MODEL} to a model the server serves, "
                "or pass model=... to ChatClient"
            )
        return cls(base_url, api_key, model=model, **overrides)

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r}, model={self.model!r}, temperature={self.temperature})"

    # cache ---------------------------------------------------------------------------------

    @property
    def cache_folder(self) -> Path:
        """Where answers are cached: ``<cache_dir>/llm``."""
        if self._cache_root is not None:
            return self._cache_root / CACHE_FOLDER
        from factscout.nn.backend import cache_dir

        return cache_dir() / CACHE_FOLDER

    def cache_path(self, messages: str | Sequence[Message]) -> Path:
        """The file that caches the answer to ``messages`` (it may not exist yet)."""
        key = cache_key(self.model, _check_messages(messages), self.temperature)
        return self.cache_folder / f"{key}.json"

    def _read_cache(self, path: Path, messages: list[dict[str, str]]) -> str | None:
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            log.warning("ignoring unreadable LLM cache entry %s", path)
            return None
        if (
            not isinstance(entry, dict)
            or entry.get("model") != self.model
            or entry.get("messages") != messages
            or not isinstance(entry.get("content"), str)
        ):
            log.warning("ignoring LLM cache entry %s: it does not match the request", path)
            return None
        return str(entry["content"])

    def _write_cache(self, path: Path, messages: list[dict[str, str]], content: str) -> None:
        entry = {
            "version": _CACHE_VERSION,
            "model": self.model,
            "temperature": self.temperature,
            "messages": messages,
            "content": content,
            "endpoint": self.url,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".llm.", suffix=".json", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(entry, f, ensure_ascii=False, indent=1)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # a read-only cache must not lose the answer
            log.warning("could not write LLM cache entry %s: %s", path, exc)

    # requests ------------------------------------------------------------------------------

    def complete(self, messages: str | Sequence[Message]) -> str:
        """The model's answer to ``messages`` (a list of ``{"role", "content"}``, or one user string)."""
        checked = _check_messages(messages)
        path = self.cache_folder / f"{cache_key(self.model, checked, self.temperature)}.json"
        if self.use_cache:
            cached = self._read_cache(path, checked)
            if cached is not None:
                log.debug("LLM answer read from cache %s", path)
                return cached
        content = self._request(checked)
        if self.use_cache and content.strip():
            self._write_cache(path, checked, content)
        return content

    def _request(self, messages: list[dict[str, str]]) -> str:
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempts = self.max_retries + 1
        problem = ""
        with httpx.Client(timeout=self.timeout) as http:
            for attempt in range(attempts):
                wait: float | None = None
                try:
                    response = http.post(self.url, json=body, headers=headers)
                except httpx.UnsupportedProtocol as exc:
                    raise InputError(f"LLM endpoint {self.url} is not a usable URL: {exc}") from None
                except httpx.TimeoutException:
                    problem = f"no answer within {self.timeout:g} s"
                except httpx.TransportError as exc:
                    problem = f"connection failed ({type(exc).__name__}: {exc})"
                else:
                    if response.status_code < 400:
                        return self._content(response)
                    if response.status_code != 429 and response.status_code < 500:
                        raise LlmError(self._refusal(response))
                    problem = f"HTTP {response.status_code}: {_snippet(response.text)}"
                    wait = _retry_after(response)
                if attempt + 1 < attempts:
                    delay = wait if wait is not None else min(self.backoff * 2**attempt, _MAX_BACKOFF_S)
                    log.info(
                        "LLM endpoint %s: %s; retry %d/%d in %.1f s",
                        self.url,
                        problem,
                        attempt + 1,
                        self.max_retries,
                        delay,
                    )
                    self._sleep(delay)
        raise LlmError(f"LLM endpoint {self.url} failed after {attempts} attempt(s): {problem}")

    def _refusal(self, response: httpx.Response) -> str:
        status = response.status_code
        detail = _snippet(response.text)
        try:
            error = response.json().get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                detail = _snippet(error["message"])
            elif isinstance(error, str):
                detail = _snippet(error)
        except (ValueError, AttributeError):
            pass
        hint = {
            401: f"; check {ENV_API_KEY}",
            403: f"; check {ENV_API_KEY}",
            404: f"; check {ENV_BASE_URL} (it usually ends in /v1) and that model {self.model!r} is served",
        }.get(status, "")
        return f"LLM endpoint {self.url} refused the request (HTTP {status}): {detail}{hint}"

    def _content(self, response: httpx.Response) -> str:
        where = f"LLM endpoint {self.url}"
        try:
            data = response.json()
        except ValueError:
            raise LlmError(f"{where} answered with non-JSON text: {_snippet(response.text)!r}") from None
        if not isinstance(data, dict):
            raise LlmError(f"{where} answered with JSON that is not an object: {_snippet(response.text)!r}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            error = data.get("error")
            extra = f" (error: {_snippet(str(error))})" if error else ""
            raise LlmError(f"{where} answered without 'choices'{extra}: {_snippet(response.text)!r}")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise LlmError(f"{where} answered a choice without 'message': {_snippet(json.dumps(first))!r}")
        content = message.get("content")
        if not isinstance(content, str):
            raise LlmError(f"{where} answered a message without text 'content': {_snippet(json.dumps(message))!r}")
        return content


# helpers shared by the prompting planners ----------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_SPEAKER_KEYS = ("speaker", "person", "claimant", "author")


def strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` blocks that reasoning models put before their answer."""
    return _THINK.sub("", text)


def claim_speaker(claim: Claim) -> str | None:
    """Who made the claim, from its metadata (``speaker``, ``person``...), when known."""
    for key in _SPEAKER_KEYS:
        value = claim.meta.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


def spoken_date(date: dt.date) -> str:
    """A claim's date as the prompts write it: ``March 30, 2020``."""
    return f"{date:%B} {date.day}, {date.year}"


class LlmPlanner:
    """The plumbing the LLM planners share: settings, a lazily created client, and the plan
    (prompt, parse, the claim first). A subclass sets ``name`` and ``finds`` (what its answers
    hold, for the log) and writes :meth:`messages` and :meth:`parse`.

    ``client`` defaults to :meth:`ChatClient.from_env` (``FACTSCOUT_LLM_*``; ``base_url`` and
    ``model`` override the env), created on the first :meth:`plan`, so building a planner needs
    no endpoint. A plan has the claim first (unless ``include_claim=False``) and at most
    ``max_queries`` queries from the answer; an endpoint failure raises :class:`LlmError`.
    """

    name = ""
    finds = "queries"

    def __init__(
        self,
        client: ChatClient | None = None,
        *,
        max_queries: int,
        include_claim: bool = True,
        base_url: str | None = None,
        model: str | None = None,
    ) -> None:
        if not isinstance(max_queries, int) or max_queries < 1:
            raise InputError(f"max_queries must be an integer >= 1, got {max_queries!r}")
        self._client = client
        self._overrides = {k: v for k, v in (("base_url", base_url), ("model", model)) if v}
        self.max_queries = max_queries
        self.include_claim = include_claim

    @property
    def client(self) -> ChatClient:
        if self._client is None:
            self._client = ChatClient.from_env(**self._overrides)
        return self._client

    def messages(self, claim: Claim) -> list[dict[str, str]]:
        """The chat sent for ``claim`` (useful to inspect or log the prompt)."""
        raise NotImplementedError

    def parse(self, answer: str) -> list[str]:
        """The queries in the model's answer, at most ``max_queries``."""
        raise NotImplementedError

    def plan(self, claim: Claim) -> list[Query]:
        answer = self.client.complete(self.messages(claim))
        queries = self.parse(answer)
        if not queries:
            log.warning("%s: no %s in the answer for claim %s: %.200r", self.name, self.finds, claim.claim_id, answer)
        return finalize(claim, queries, self.name, include_claim=self.include_claim)
