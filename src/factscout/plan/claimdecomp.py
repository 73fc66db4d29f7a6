"""ClaimDecomp-style planning: an LLM writes the yes/no sub-questions a fact-checker would ask.

Chen, Sriram, Choi & Durrett, 2022, "Generating Literal and Implied Subquestions to Fact-check
Complex Claims", EMNLP (https://aclanthology.org/2022.emnlp-main.229). A complex claim is
checked by answering yes/no sub-questions about what it says (*literal*) and about what must
also hold for it to be true or what the speaker implies (*implied*); the paper few-shot prompts
GPT-3 with annotated decompositions. Here any OpenAI-compatible chat model is prompted
(:mod:`factscout.plan.llm`) with the ClaimDecomp dev decompositions most similar to the claim
(MiniLM embeddings, Reimers & Gurevych 2019) as in-context examples, the claim's speaker and
date when known, and the sub-questions of the answer become the search queries.

An example whose claim is the claim being planned is never shown (no leakage when planning
ClaimDecomp itself). Without the dataset the planner falls back to a few built-in examples;
without the dense extra it picks examples by word overlap instead of MiniLM similarity.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factscout.errors import DataNotFound, InputError, MissingDependency
from factscout.plan.base import PLANNERS
from factscout.plan.llm import ChatClient, LlmPlanner, claim_speaker, spoken_date, strip_reasoning
from factscout.records import Claim

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DEFAULT_EXAMPLES = 4
DEFAULT_MAX_QUERIES = 10
_EXAMPLE_QUESTIONS = 8  # at most this many questions shown per in-context example

Embed = Callable[[Sequence[str]], "np.ndarray"]


@dataclass(frozen=True, slots=True)
class DecompExample:
    """An annotated decomposition shown to the model: a claim and its yes/no sub-questions."""

    example_id: str
    claim: str
    questions: tuple[str, ...]
    speaker: str | None = None
    date: dt.date | None = None


# Used only when the ClaimDecomp data is not available; written in the dataset's style.
BUILTIN_EXAMPLES: tuple[DecompExample, ...] = (
    DecompExample(
        "builtin-1",
        "With voting by mail, you get thousands and thousands of people sitting in somebody's living room, "
        "signing ballots all over the place.",
        (
            "Is there evidence of thousands of people committing mail-in voting fraud?",
            "Is voting fraud widespread in the US?",
            "Is there a greater risk of voting fraud with mail-in ballots than with in-person voting?",
        ),
        "Donald Trump",
        dt.date(2020, 4, 7),
    ),
    DecompExample(
        "builtin-2",
        "Our state has cut its unemployment rate in half since I took office.",
        (
            "Was the state's unemployment rate when the governor took office about twice the current rate?",
            "Has the state's unemployment rate fallen since the governor took office?",
            "Did the governor's policies cause the fall in unemployment?",
            "Did unemployment fall as much in neighbouring states or nationally over the same period?",
        ),
        None,
        None,
    ),
    DecompExample(
        "builtin-3",
        "The new budget spends more on prisons than on public universities.",
        (
            "Does the new budget allocate more money to prisons than to public universities?",
            "Is the comparison based on the same kind of spending (general funds or all funds)?",
            "Has prison spending grown faster than university spending in recent budgets?",
        ),
        None,
        None,
    ),
)


def _text_key(text: str) -> str:
    """How two claim texts are compared for leakage: case, quotes, punctuation and spaces ignored."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def load_examples(split: str = "dev") -> list[DecompExample]:
    """The annotated ClaimDecomp claims of ``split`` (every annotator's questions, de-duplicated)."""
    from factscout.datasets import load_dataset

    examples = []
    for claim in load_dataset("claimdecomp", split).claims:
        questions = tuple(q for q in claim.meta.get("questions") or () if isinstance(q, str) and q.strip())
        if questions:
            examples.append(DecompExample(claim.claim_id, claim.text, questions, claim_speaker(claim), claim.date))
    return examples


def hashed_bag_of_words(texts: Sequence[str], dimension: int = 2048) -> np.ndarray:
    """L2-normalised hashed word counts: the similarity used when MiniLM is not installed."""
    import numpy as np

    out = np.zeros((len(texts), dimension), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.casefold()):
            if len(word) > 2:
                out[i, zlib.crc32(word.encode("utf-8")) % dimension] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


class ExampleSelector:
    """Picks the in-context examples most similar to a claim (cosine of claim embeddings).

    ``examples`` defaults to ClaimDecomp dev (:func:`load_examples`, or
    :data:`BUILTIN_EXAMPLES` when the data is missing); ``embed`` maps texts to row vectors and
    defaults to the MiniLM :class:`~factscout.text.encoder.Encoder` (the pool's embeddings
    are cached on disk), or :func:`hashed_bag_of_words` when the dense extra is not installed.
    The pool is loaded and embedded once, on the first :meth:`select`.
    """

    def __init__(self, examples: Sequence[DecompExample] | None = None, *, embed: Embed | None = None) -> None:
        self._examples: list[DecompExample] | None = list(examples) if examples is not None else None
        self._embed = embed
        self._pool_embed: Embed | None = embed
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    @property
    def examples(self) -> list[DecompExample]:
        if self._examples is None:
            try:
                self._examples = load_examples("dev")
            except DataNotFound as exc:
                log.warning("ClaimDecomp data not found (%s); using the built-in examples", exc)
                self._examples = list(BUILTIN_EXAMPLES)
        return self._examples

    def _default_embedders(self) -> tuple[Embed, Embed]:
        from factscout.text.encoder import Encoder

        encoder = Encoder()
        try:
            encoder.encode(["probe"])
        except MissingDependency as exc:
            log.warning("picking ClaimDecomp examples by word overlap: %s", exc)
            return hashed_bag_of_words, hashed_bag_of_words
        return encoder.encode, encoder.encode_cached

    def _prepare(self) -> tuple[list[DecompExample], np.ndarray, Embed]:
        with self._lock:
            examples = self.examples
            if self._embed is None:
                self._embed, self._pool_embed = self._default_embedders()
            embed = self._embed
            if self._matrix is None:
                import numpy as np

                pool_embed = self._pool_embed or embed
                matrix = np.asarray(pool_embed([e.claim for e in examples]), dtype=np.float32).reshape(
                    len(examples), -1
                )
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                self._matrix = matrix / np.where(norms > 0, norms, 1.0)
            return examples, self._matrix, embed

    def select(self, claim: Claim | str, k: int = DEFAULT_EXAMPLES) -> list[DecompExample]:
        """The ``k`` examples most similar to ``claim``, best first, never the claim itself."""
        if not isinstance(k, int) or k < 0:
            raise InputError(f"number of in-context examples must be an integer >= 0, got {k!r}")
        text = claim.text if isinstance(claim, Claim) else claim
        claim_id = claim.claim_id if isinstance(claim, Claim) else None
        if k == 0:
            return []
        examples, matrix, embed = self._prepare()
        if not examples:
            return []
        import numpy as np

        query = np.asarray(embed([text]), dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        scores = matrix @ (query / norm if norm > 0 else query)
        key = _text_key(text)
        allowed = [
            i
            for i, e in enumerate(examples)
            if _text_key(e.claim) != key and (claim_id is None or e.example_id != claim_id)
        ]
        allowed.sort(key=lambda i: (-float(scores[i]), i))
        return [examples[i] for i in allowed[:k]]


# prompt ------------------------------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are a professional fact-checker. To verify a claim, you write the yes/no questions whose "
    "answers decide whether it is true. Cover the literal content of the claim (what it states, the "
    "numbers, dates, people and places it names) and its implied aspects (the context a fact-checker "
    "would look at, what must also be true for the claim to hold, what the speaker suggests). Each "
    "question must be answerable with yes or no and understandable on its own, without the claim. "
    "Answer with the questions only, one per line."
)


def format_claim(text: str, speaker: str | None = None, date: dt.date | None = None) -> str:
    """The user turn for one claim: the claim, then its speaker and date when known."""
    lines = [f"Claim: {' '.join(text.split())}"]
    if speaker:
        lines.append(f"Speaker: {speaker}")
    if date is not None:
        lines.append(f"Date: {spoken_date(date)}")
    lines.append("Questions:")
    return "\n".join(lines)


def build_messages(claim: Claim, examples: Sequence[DecompExample]) -> list[dict[str, str]]:
    """The chat for ``claim``: the instructions, one user/assistant turn per example, the claim.

    Examples come best first from :meth:`ExampleSelector.select` and are shown in reverse, so
    the most similar one sits right before the claim.
    """
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for example in reversed(examples):
        messages.append({"role": "user", "content": format_claim(example.claim, example.speaker, example.date)})
        answer = "\n".join(example.questions[:_EXAMPLE_QUESTIONS])
        messages.append({"role": "assistant", "content": answer})
    messages.append({"role": "user", "content": format_claim(claim.text, claim_speaker(claim), claim.date)})
    return messages


# parsing -----------------------------------------------------------------------------------

_ASK = (
    r"(?:is|are|was|were|am|do|does|did|has|have|had|can|could|will|would|should|shall|may|might|must|"
    r"how|what|when|where|which|who|whom|whose|why|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|"
    r"hasn't|haven't|hadn't|can't|won't)"
)
_STARTS_ASKING = re.compile(rf"^{_ASK}\b", re.IGNORECASE)
_STARTS_ASKING_CAPITAL = re.compile(rf"^(?=[A-Z]){_ASK}\b", re.IGNORECASE)
_MARKER = re.compile(
    r"^\s*(?:[-*•–—+>#]+|\(?\d{1,2}\s*[.):]|\([a-hA-H]\)|[a-hA-H]\)|(?:q(?:uestion)?\s*#?\d+\s*[.):-]?))\s*",
    re.IGNORECASE,
)
_TAG = re.compile(r"^[\[(]?\s*(?:literal|implied)\s*[\])]?\s*[:\-–]?\s*", re.IGNORECASE)
_PREAMBLE = re.compile(r"^([^?:]{1,100}?):\s+")
_EDGE = " \t\"'`“”‘’[]{},>"
_SEGMENT = re.compile(r"[^?]*\?+")
_FENCE = re.compile(r"```[A-Za-z]*")
_SENTENCE_END = re.compile(r"(\w+)[.!]\s+(?=[\"'“‘]?[A-Z])")


def _json_items(text: str) -> list[str] | None:
    """The questions of an answer given as a JSON list (or ``{"questions": [...]}``), if it is one."""
    candidates = [text.strip()]
    for open_, close in (("[", "]"), ("{", "}")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            data: Any = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            data = next((v for k, v in data.items() if "question" in str(k).lower() and isinstance(v, list)), None)
        if not isinstance(data, list):
            continue
        items = []
        for item in data:
            if isinstance(item, dict):
                item = next((v for k, v in item.items() if k in ("question", "q", "text") and isinstance(v, str)), None)
            if isinstance(item, str) and item.strip():
                items.append(item)
        if items:
            return items
    return None


def _line_items(text: str) -> list[str]:
    """Group lines into list items: a marker or a new question starts one, a wrapped line continues it."""
    items: list[str] = []
    is_open = False
    for raw in text.splitlines():
        line = raw.replace("**", "").replace("__", "").strip()
        if not line:
            is_open = False
            continue
        marker = _MARKER.match(line)
        body = (line[marker.end() :] if marker else line).strip(_EDGE)
        if not body:
            continue
        if marker or not is_open or not items or _STARTS_ASKING_CAPITAL.match(body):
            items.append(body)
        else:
            items[-1] = f"{items[-1]} {body}"
        is_open = not body.endswith(("?", ":"))
    return items


def _clean(segment: str) -> str:
    text = " ".join(segment.split()).strip(_EDGE)
    for _ in range(3):
        before = text
        text = _TAG.sub("", text)
        marker = _MARKER.match(text)
        if marker:
            text = text[marker.end() :].strip(_EDGE)
        preamble = _PREAMBLE.match(text)
        if preamble and not _STARTS_ASKING.match(preamble.group(1).strip(_EDGE)):
            rest = text[preamble.end() :].strip(_EDGE)
            rest_marker = _MARKER.match(rest)
            if _STARTS_ASKING.match(rest[rest_marker.end() :] if rest_marker else rest):
                text = rest
        if text == before:
            break
    return text


def _last_sentence(segment: str) -> str:
    """The sentence a question mark ends ("This checks the date. Is it 2020?" -> "Is it 2020?").

    A boundary is ". " or "! " after a lower-case word or a number and before a capital, so
    "Did Gov. Evers ..." and "the U.S. Senate" stay whole.
    """
    start = 0
    for m in _SENTENCE_END.finditer(segment):
        word = m.group(1)
        if word.isdigit() or (word.islower() and len(word) > 1):
            start = m.end()
    return segment[start:]


def _is_question(text: str) -> bool:
    return text.endswith("?") and len(re.findall(r"\w+", text)) >= 3


def _questions_in(item: str) -> list[str]:
    segments: list[str] = []
    for seg in _SEGMENT.findall(item):
        # "?" inside a quotation ("did he ask 'why not?' in ...") does not end the question
        if segments and not re.match(r"^\s*[\"'“‘(\[]*\s?[A-Z0-9]", seg) and not _MARKER.match(seg):
            segments[-1] += seg
        else:
            segments.append(seg)
    questions = [q for q in (_clean(_last_sentence(s)) for s in segments) if _is_question(q)]
    if not segments:  # no question mark at all: accept a line that reads as a question
        text = _clean(re.split(r"(?<=[.!])\s", item.strip())[0]).rstrip(".! ")
        if _STARTS_ASKING.match(text) and 3 <= len(text.split()) <= 40:
            questions.append(f"{text}?")
    return [re.sub(r"\?+$", "?", q) for q in questions]


def parse_questions(text: str, max_questions: int | None = None) -> list[str]:
    """The yes/no questions in a model's answer, in order, de-duplicated, at most ``max_questions``.

    Robust to what chat models do: numbered or bulleted lists, ``Q1:`` labels, ``[literal]``
    tags, markdown bold, JSON arrays (even in code fences), a question wrapped over two lines,
    preambles ("Here are the questions:"), explanations after a question, ``<think>`` blocks.
    Only question-like text is kept (ends in "?" and has three words or more).
    """
    text = _FENCE.sub("\n", strip_reasoning(text or ""))
    items = _json_items(text)
    if items is None:
        items = _line_items(text)
    seen: set[str] = set()
    questions: list[str] = []
    for item in items:
        for question in _questions_in(item):
            key = question.casefold().rstrip("?").strip()
            if key not in seen:
                seen.add(key)
                questions.append(question)
    return questions if max_questions is None else questions[: max(0, max_questions)]


# planner -----------------------------------------------------------------------------------


@PLANNERS.register("claimdecomp")
class ClaimDecompPlanner(LlmPlanner):
    """ClaimDecomp-style yes/no sub-questions from an LLM (Chen et al. 2022) as search queries.

    The client, ``max_queries``, ``include_claim`` and the plan come from
    :class:`~factscout.plan.llm.LlmPlanner`. ``n_examples`` in-context examples are picked per
    claim by ``selector`` (default: MiniLM similarity over ClaimDecomp dev); a plan has at most
    ``max_queries`` sub-questions.
    """

    name = "claimdecomp"
    finds = "questions"

    def __init__(
        self,
        client: ChatClient | None = None,
        *,
        n_examples: int = DEFAULT_EXAMPLES,
        max_queries: int = DEFAULT_MAX_QUERIES,
        include_claim: bool = True,
        selector: ExampleSelector | None = None,
        base_url: str | None = None,
        model: str | None = None,
    ) -> None:
        if not isinstance(n_examples, int) or n_examples < 0:
            raise InputError(f"n_examples must be an integer >= 0, got {n_examples!r}")
        super().__init__(client, max_queries=max_queries, include_claim=include_claim, base_url=base_url, model=model)
        self.n_examples = n_examples
        self.selector = selector if selector is not None else ExampleSelector()

    def messages(self, claim: Claim) -> list[dict[str, str]]:
        """The chat sent for ``claim`` (useful to inspect or log the prompt)."""
        return build_messages(claim, self.selector.select(claim, self.n_examples))

    def parse(self, answer: str) -> list[str]:
        return parse_questions(answer, self.max_queries)
