"""Keep-set search: trajectories of many removals, for endpoints where single edits find nothing.

The paper's BFS (:mod:`.bfs`) expands only edits that improve the reward. On a conjunctive
endpoint (``bm25-and``: every query term must appear) a whole claim usually matches nothing,
and so does the claim minus any one word: every first edit scores 0, nothing improves, and the
BFS finds no trajectory although a query of three of the claim's words would find the evidence.
Improvement-only search cannot cross that plateau, and a wider BFS cannot afford to (removing 10
of 15 words is C(15, 10) = 3,003 queries per claim at depth 10).

Keep-set search looks at the same removals from the other end. Removing words commutes (the
result is the set of words kept, whatever the order), so it grows the set of *kept* words
instead: start from nothing, and at each round add the claim word whose addition scores best
(greedy forward selection), as long as the reward improves by ``min_gain`` (relative, as in the
BFS); the empty start scores 0, so the first round keeps one word if any word finds a relevant
passage. When none does (a single common word matches too much), the first round is over pairs of
words instead, which crosses that plateau. A round costs one batched search of at most
``len(words)`` queries (pairs: ``len(words)`` choose 2), so a 15-word claim costs about 100-250
queries, not thousands. The best keep-set becomes an ordinary
trajectory: remove every other word, leftmost first, through :func:`~.actions.apply_action`
(so every step is a valid action of the paper's Table 1, tokens past position 31 come into range
as earlier ones go, and each step's reward is the endpoint's).

Nothing here reads the endpoint's insides: it sees query strings and rewards, as the BFS does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factscout.records import Claim
from factscout.rewrite.actions import MAX_POSITIONS, ParsedQuery, Token, apply_action, parse
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.trajectories import Step, Trajectory

_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class KeepSet:
    """The words a keep-set search kept (indices into the claim's tokens) and what they score."""

    keep: tuple[int, ...]
    query: str
    reward: float
    candidates: int  # queries scored


def kept_text(tokens: Sequence[Token], keep: Sequence[int]) -> str:
    """The query of the kept tokens, in claim order, with their own whitespace."""
    chosen = sorted(set(keep))
    return "".join(tokens[i].text + (tokens[i].whitespace or " ") for i in chosen).strip()


def _content(token: Token) -> bool:
    return any(ch.isalnum() for ch in token.text)


def search_keep_set(
    claim: Claim, environment: SearchEnvironment, *, min_gain: float = 0.03, max_words: int = 12
) -> KeepSet:
    """Greedy forward selection of the claim words to keep (see the module docstring).

    Only words with a letter or digit are candidates (punctuation never changes an analysed
    query). Ties go to the earlier word, so the result is deterministic."""
    parsed = parse(claim.text)
    words = [i for i, t in enumerate(parsed.tokens) if _content(t)]
    keep: list[int] = []
    best, best_query, candidates = 0.0, "", 0
    pairs_first = False
    while len(keep) < min(max_words, len(words)):
        options: list[tuple[int, ...]] = [(i,) for i in words if i not in keep]
        if not keep and pairs_first:
            options = [(i, j) for n, i in enumerate(words) for j in words[n + 1 :]]
        queries = [kept_text(parsed.tokens, [*keep, *o]) for o in options]
        rewards = environment.rewards(claim, queries)
        candidates += len(queries)
        if not options:
            break
        top = max(range(len(options)), key=lambda j: (rewards[j], -j))
        reward = rewards[top]
        if reward <= best + _EPS and not keep and not pairs_first and len(words) > 1:
            pairs_first = True  # no single word finds anything: cross the plateau with pairs
            continue
        if reward <= best + _EPS or (best > _EPS and (reward - best) / best < min_gain - _EPS):
            break
        keep.extend(options[top])
        best, best_query = reward, queries[top]
    return KeepSet(tuple(sorted(keep)), best_query, best, candidates)


def align_tokens(claim: ParsedQuery, current: ParsedQuery) -> list[int] | None:
    """For each token of ``current`` (the claim after removals), its index in the claim; None
    when re-tokenisation changed a token so that they no longer line up."""
    out, j = [], 0
    for tok in current.tokens:
        while j < len(claim.tokens) and claim.tokens[j].text != tok.text:
            j += 1
        if j == len(claim.tokens):
            return None
        out.append(j)
        j += 1
    return out


def removal_trajectory(
    claim: Claim, keep: Sequence[int], environment: SearchEnvironment, sequence: int = 0
) -> Trajectory | None:
    """The trajectory that removes every claim token not in ``keep``, leftmost first, with the
    endpoint's reward before and after each step; None when nothing is removed or the
    re-tokenised query stops lining up with the claim."""
    original = parse(claim.text)
    kept = set(keep)
    query = original.text
    reward = environment.reward(claim, query)
    steps: list[Step] = []
    for _ in range(len(original.tokens)):
        current = parse(query)
        where = align_tokens(original, current)
        if where is None:
            return None
        position = next((p for p, i in enumerate(where) if i not in kept), None)
        if position is None:
            break
        if position >= MAX_POSITIONS:  # only tokens past 31 remain to remove: unreachable
            break
        edit = apply_action(current, 3 * MAX_POSITIONS + position)
        after = environment.reward(claim, edit.next_query)
        steps.append(
            Step(
                claim.claim_id,
                sequence,
                len(steps),
                query,
                edit.action_id,
                edit.description,
                edit.next_query,
                reward,
                after,
            )
        )
        query, reward = edit.next_query, after
    return Trajectory(claim.claim_id, tuple(steps)) if steps else None
