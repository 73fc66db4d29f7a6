"""ProgramFC-style planning: an LLM writes a reasoning program whose steps become queries.

Pan, Wu, Lu, Luu, Wang, Kan & Nakov, 2023, "Fact-Checking Complex Claims with Program-Guided
Reasoning", ACL (https://aclanthology.org/2023.acl-long.386). The model is few-shot prompted to
write a Python-like program for the claim::

    # The claim is that the director of the film Jaws was born in Ohio.
    def program():
        answer_1 = Question("Who directed the film Jaws?")
        fact_1 = Verify(f"{answer_1} was born in Ohio.")
        label = Predict(fact_1)

ProgramFC executes the program with a QA model; here every ``Question(...)`` and ``Verify(...)``
argument is a search query (in program order). A ``{answer_n}`` placeholder is replaced by the
question it stands for, so the query keeps the words needed to find the evidence. The few-shot
examples below are hand-written in the paper's prompt format; any OpenAI-compatible chat model
is prompted through :mod:`factscout.plan.llm`.
"""

from __future__ import annotations

import logging
import re

from factscout.plan.base import PLANNERS
from factscout.plan.claimdecomp import DEFAULT_MAX_QUERIES, parse_questions
from factscout.plan.llm import ChatClient, LlmPlanner, claim_speaker, spoken_date, strip_reasoning
from factscout.records import Claim

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "Generate a python-like program that describes the reasoning steps required to verify the claim "
    "step-by-step. You can call three functions in the program: 1. Question() to answer a question; "
    "2. Verify() to verify a simple claim; 3. Predict() to predict the veracity label. Every Question() "
    "and Verify() must be understandable on its own. Answer with the program only."
)

# Hand-written in the format of the ProgramFC prompts (Pan et al. 2023, appendix).
EXAMPLES = """# The claim is that the Eiffel Tower is taller than the Statue of Liberty and was completed before 1900.
def program():
    fact_1 = Verify("The Eiffel Tower is taller than the Statue of Liberty.")
    fact_2 = Verify("The Eiffel Tower was completed before 1900.")
    label = Predict(fact_1 and fact_2)

# The claim is that the director of the film Jaws was born in Ohio.
def program():
    answer_1 = Question("Who directed the film Jaws?")
    fact_1 = Verify(f"{answer_1} was born in Ohio.")
    label = Predict(fact_1)

# The claim is that the number of murders in Chicago doubled between 2019 and 2021.
def program():
    answer_1 = Question("How many murders were recorded in Chicago in 2019?")
    answer_2 = Question("How many murders were recorded in Chicago in 2021?")
    fact_1 = Verify(f"The number of murders in Chicago in 2021 ({answer_2}) was at least twice the number in 2019 ({answer_1}).")
    label = Predict(fact_1)

# The claim is that the United States has done more coronavirus tests than any other country.
# Said by Donald Trump on March 30, 2020.
def program():
    answer_1 = Question("How many coronavirus tests had the United States done by March 30, 2020?")
    answer_2 = Question("Which country had done the most coronavirus tests by March 30, 2020?")
    fact_1 = Verify("The United States had done more coronavirus tests than any other country by March 30, 2020.")
    label = Predict(fact_1)

# The claim is that a vaccine for the new coronavirus was available in 2001 and the government hid it.
def program():
    fact_1 = Verify("A vaccine for the new coronavirus was available in 2001.")
    fact_2 = Verify("The government hid a coronavirus vaccine.")
    label = Predict(fact_1 and fact_2)
"""


def program_header(claim: Claim) -> str:
    """The comment lines that introduce ``claim``, as in the examples (speaker and date when known)."""
    text = " ".join(claim.text.split())
    lines = [f"# The claim is that {text}"]
    speaker = claim_speaker(claim)
    if speaker or claim.date is not None:
        said = "# Said"
        if speaker:
            said += f" by {speaker}"
        if claim.date is not None:
            said += f" on {spoken_date(claim.date)}"
        lines.append(said + ".")
    return "\n".join(lines)


def build_messages(claim: Claim) -> list[dict[str, str]]:
    """The chat for ``claim``: ProgramFC's instruction, the examples, the claim and ``def program():``."""
    prompt = f"{EXAMPLES}\n{program_header(claim)}\ndef program():"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]


# parsing -----------------------------------------------------------------------------------

_CALL = re.compile(r"(?:\b(\w+)\s*=\s*)?\b(Question|Verify)\s*\(\s*(?:\w+\s*=\s*(?![=]))?", re.IGNORECASE)
_QUOTES = {'"""': '"""', "'''": "'''", '"': '"', "'": "'", "“": "”", "‘": "’"}
_PLACEHOLDER = re.compile(r"(\(\s*)?\{\s*(\w+)\s*\}(\s*\))?")


def _argument(text: str, start: int) -> str:
    """The string argument of a call whose ``(`` ends at ``start``; tolerant of missing quotes/parens."""
    i = start
    if i < len(text) and text[i] in "fFrRbBuU" and text[i + 1 : i + 2] in ("'", '"'):
        i += 1
    opening = next((q for q in _QUOTES if text.startswith(q, i)), None)
    if opening is None:  # unquoted: up to the closing paren or the end of the line
        end = text.find("\n", i)
        line = text[i : end if end >= 0 else len(text)]
        close = line.rfind(")")
        return (line[:close] if close >= 0 else line).strip()
    closing = _QUOTES[opening]
    i += len(opening)
    j = i
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(closing, j):
            return text[i:j].replace('\\"', '"').replace("\\'", "'")
        if text[j] == "\n" and len(opening) == 1:
            break
        j += 1
    # no closing quote: the rest of the line, minus a trailing quote/paren
    rest = text[i:j]
    return rest.rstrip().rstrip(")").rstrip().rstrip("\"'”’").replace('\\"', '"').replace("\\'", "'")


def parse_program(text: str, max_queries: int | None = None) -> list[str]:
    """The ``Question(...)`` and ``Verify(...)`` arguments of a program, in order, de-duplicated.

    Robust to code fences, ``<think>`` blocks, single, double, triple or curly quotes, f-strings,
    keyword arguments, a missing closing quote or parenthesis, and prose around the program.
    ``{answer_n}`` placeholders become the text of the question that defines ``answer_n`` (a
    parenthesised ``({answer_n})`` is dropped). An answer with no program at all is read as a
    list of questions (:func:`~factscout.plan.claimdecomp.parse_questions`).
    """
    text = strip_reasoning(text or "")
    answers: dict[str, str] = {}
    steps: list[str] = []

    def fill(m: re.Match[str]) -> str:
        if m.group(1) and m.group(3):  # "({answer_1})": the value, not needed in a query
            return ""
        value = answers.get(m.group(2), "")
        return f"{m.group(1) or ''}{value}{m.group(3) or ''}"

    for match in _CALL.finditer(text):
        argument = " ".join(_argument(text, match.end()).split())
        if match.group(2).lower() == "question" and match.group(1):
            answers[match.group(1)] = argument.rstrip("?").strip()
        query = " ".join(_PLACEHOLDER.sub(fill, argument).split())
        query = re.sub(r"\s+([.,;:?!])", r"\1", query).strip(" \"'")
        if len(re.findall(r"\w+", query)) >= 2:
            steps.append(query)
    if not steps and not _CALL.search(text):
        steps = parse_questions(text)
    seen: set[str] = set()
    queries = []
    for step in steps:
        key = step.casefold().rstrip("?.! ")
        if key and key not in seen:
            seen.add(key)
            queries.append(step)
    return queries if max_queries is None else queries[: max(0, max_queries)]


# planner -----------------------------------------------------------------------------------


@PLANNERS.register("programfc")
class ProgramFcPlanner(LlmPlanner):
    """ProgramFC-style reasoning-program steps from an LLM (Pan et al. 2023) as search queries.

    The client, ``max_queries``, ``include_claim`` and the plan come from
    :class:`~factscout.plan.llm.LlmPlanner`; a plan has at most ``max_queries`` program steps.
    """

    name = "programfc"
    finds = "program steps"

    def __init__(
        self,
        client: ChatClient | None = None,
        *,
        max_queries: int = DEFAULT_MAX_QUERIES,
        include_claim: bool = True,
        base_url: str | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(client, max_queries=max_queries, include_claim=include_claim, base_url=base_url, model=model)

    def messages(self, claim: Claim) -> list[dict[str, str]]:
        """The chat sent for ``claim``."""
        return build_messages(claim)

    def parse(self, answer: str) -> list[str]:
        return parse_program(answer, self.max_queries)
