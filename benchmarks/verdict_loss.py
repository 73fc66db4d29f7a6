"""Where each verdict is lost: ``check``'s verdict macro-F1 decomposed step by step, per domain.

On **Check-COVID dev** (207 news claims, a closed pool of 347 CORD-19 abstracts) and **SciFact's
dev part** (the 92 claims of SciFact train that the stance cross-encoder chooses its epoch on:
:func:`factscout.training.stance.pairs.scifact_dev_ids`, as ``scripts/tune_count_rule.py`` picks
them; the closed pool is the 5,183 SciFact abstracts), rows of verdict macro-F1 over supported /
refuted / not enough evidence:

1. **rule ceiling**: the count rule (the thresholds ``check`` uses with the first ``--stance``
   model) on the gold evidence sentences with their gold stances (probability 1). The gold
   sentences are the rationale sentences of the claim's evidence abstracts; a not-enough-info
   claim has none in SciFact and its annotated on-topic sentences (``nei_sentences``, stance not
   enough info) in Check-COVID, so the rule says not enough evidence for it;
2. **gold sentences + stance model**: the same sentences, each stance predicted by the model as
   ``check`` loads it (``--stance SPEC``, repeatable, any spec ``factscout stance`` takes; the
   default ``cross`` runs as ``check`` runs it, int8);
3. **check**: what ``check`` does (default settings; the code of ``benchmarks/verdict_domains.py``,
   the same cached closed-pool index): plan, retrieve, fuse, select sentences from the top 5
   passages, predicted stances, count rule;

and for rows 2 and 3 the **NEI decision** on its own: precision / recall / F1 of "not enough
evidence" as a binary call (gold NEI vs not), and the macro-F1 when the NEI decision is made by
oracle (``NEI by oracle``: gold not-enough-info claims get not enough evidence; every other claim
is decided between supported and refuted by the rule's counts of confident supporting and
refuting sentences, a tie, 0-0 included, by the summed supporting vs refuting probabilities of
its sentences; a claim with no sentence at all stays not enough evidence, counted as
``undecided``). ``direction accuracy`` is the share of right calls among the gold supported /
refuted claims that got a supported / refuted call. For row 3 the recall of the gold rationale
sentences among the selected ones says how often the rationale reached the stance model (a
selected sentence reaches a gold sentence when their character spans in the abstract overlap:
``check`` splits the passage text itself), beside the recall of the evidence abstracts among the
passages read.

Per-class F1, confusion matrices and the NEI figures are in ``benchmarks/results/verdict_loss/
scores.json``; per-claim predictions beside it. ``--checkcovid FILE.json`` scores another
Check-COVID split (its claim rows, as ``check-covid/dev/*.json``) against the same 347 abstracts;
``--limit N`` takes the first N claims per domain (results then go to ``verdict_loss_smoke``).

    python benchmarks/verdict_loss.py [--domains checkcovid,scifact] [--stance cross [--stance ...]]
        [--checkcovid FILE.json] [--limit N] [--retriever hybrid]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import RESULTS, ROOT, machine, markdown_table, publish, quiet, write_predictions
from verdict import LABELS, gold_label
from verdict_domains import closed_pool_index

from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim, Passage, Sentence, Stance
from factscout.verify.verdict import CountRule

NAME = "verdict_loss"
DOMAINS = {"checkcovid": "Check-COVID", "scifact": "SciFact"}
S, R, N = LABELS  # supported, refuted, not enough evidence
_STANCE_OF = {"SUPPORT": SUPPORTS, "CONTRADICT": REFUTES}
_ONE_HOT = {SUPPORTS: (1.0, 0.0, 0.0), REFUTES: (0.0, 1.0, 0.0), NOT_ENOUGH_INFO: (0.0, 0.0, 1.0)}


# --- gold evidence ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GoldSentence:
    """One gold evidence sentence of a claim: its abstract, index there, text and gold stance."""

    passage_id: str
    index: int
    text: str
    stance: str

    def as_sentence(self) -> Sentence:
        return Sentence(self.passage_id, self.index, self.text)

    def as_stance(self) -> Stance:
        """The gold stance as a stance with probability 1."""
        return Stance(self.passage_id, self.index, self.stance, _ONE_HOT[self.stance])  # type: ignore[arg-type]


def gold_sentences(claim: Claim, abstracts: Mapping[str, Sequence[str]]) -> list[GoldSentence]:
    """The gold evidence of ``claim`` (SciFact metadata layout): every rationale sentence of its
    evidence abstracts with the set's stance; for a not-enough-info claim the sentences its
    annotators pointed at (``meta['nei_sentences']`` of its cited abstract, Check-COVID), stance
    not enough info, else none. Abstract order, each sentence once."""
    out: dict[tuple[str, int], GoldSentence] = {}
    for doc, sets in sorted((claim.meta.get("evidence") or {}).items()):
        for evidence_set in sets:
            stance = _STANCE_OF.get(str(evidence_set.get("label")), NOT_ENOUGH_INFO)
            for i in sorted(int(x) for x in evidence_set.get("sentences") or ()):
                out.setdefault((doc, i), GoldSentence(doc, i, abstracts[doc][i], stance))
    cited = list(claim.meta.get("cited_doc_ids") or ())
    if not out and claim.meta.get("nei_sentences") and cited:
        for i in sorted(int(x) for x in claim.meta["nei_sentences"]):
            out.setdefault((cited[0], i), GoldSentence(cited[0], i, abstracts[cited[0]][i], NOT_ENOUGH_INFO))
    return [out[k] for k in sorted(out)]


def rationale(golds: Sequence[GoldSentence]) -> list[GoldSentence]:
    """The gold sentences that settle the claim (supporting or refuting)."""
    return [g for g in golds if g.stance != NOT_ENOUGH_INFO]


# --- verdicts -----------------------------------------------------------------------------------


def rule_verdicts(stances: Sequence[Sequence[Stance]], rule: CountRule) -> list[str]:
    """The count rule's verdict of each claim's stances."""
    return [rule(s).label for s in stances]


def direction(stances: Sequence[Stance], rule: CountRule) -> str | None:
    """Supported or refuted, from the rule's counts of confident supporting and refuting
    sentences; a tie (0-0 included) by the summed supporting vs refuting probabilities; ``None``
    with no sentence or an exact tie."""
    verdict = rule(stances)
    n_sup, n_ref = len(verdict.supporting), len(verdict.refuting)
    if n_sup != n_ref:
        return S if n_sup > n_ref else R
    p_sup = sum(s.probabilities[0] for s in stances)
    p_ref = sum(s.probabilities[1] for s in stances)
    if not stances or p_sup == p_ref:
        return None
    return S if p_sup > p_ref else R


def oracle_nei(gold: Sequence[str], stances: Sequence[Sequence[Stance]], rule: CountRule) -> tuple[list[str], int]:
    """The verdicts with the NEI decision made by oracle (gold not-enough-evidence claims get it,
    the others :func:`direction`) and how many definite claims stayed undecided (no sentence or
    an exact tie: not enough evidence)."""
    out, undecided = [], 0
    for g, st in zip(gold, stances, strict=True):
        if g == N:
            out.append(N)
            continue
        d = direction(st, rule)
        undecided += d is None
        out.append(d or N)
    return out, undecided


# --- scores -------------------------------------------------------------------------------------


def verdict_scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Macro-F1 and accuracy over the three verdicts, per-class precision / recall / F1, the
    confusion matrix (``{gold: {predicted: n}}``), the NEI decision and the direction accuracy."""
    if len(gold) != len(pred) or not gold:
        raise ValueError(f"{len(gold)} gold labels and {len(pred)} predictions")
    per = {}
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        n_pred, n_gold = sum(p == label for p in pred), sum(g == label for g in gold)
        per[label] = _prf(tp, n_pred, n_gold)
    confusion = {
        g: {p: sum(a == g and b == p for a, b in zip(gold, pred, strict=True)) for p in LABELS} for g in LABELS
    }
    definite = [(g, p) for g, p in zip(gold, pred, strict=True) if g != N and p != N]
    return {
        "claims": len(gold),
        "macro_f1": sum(per[label]["f1"] for label in LABELS) / len(LABELS),
        "accuracy": sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold),
        "per_class": per,
        "confusion": confusion,
        "nei_decision": nei_decision(gold, pred),
        "direction": {
            "calls": len(definite),
            "right": sum(g == p for g, p in definite),
            "accuracy": sum(g == p for g, p in definite) / len(definite) if definite else None,
        },
    }


def nei_decision(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """The NEI decision as a binary call ("not enough evidence" or not): precision, recall, F1 against the gold NEI claims."""
    tp = sum(g == p == N for g, p in zip(gold, pred, strict=True))
    return _prf(tp, sum(p == N for p in pred), sum(g == N for g in gold))


def _prf(tp: int, n_pred: int, n_gold: int) -> dict[str, Any]:
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "predicted": n_pred, "gold": n_gold, "right": tp}


def split_map(abstract: Sequence[str]) -> list[set[int]]:
    """For each sentence of ``abstract``, the sentences of ``check``'s own split of the passage
    text (``" ".join(abstract)``, :func:`~factscout.text.sentences.sentences_of`) whose character
    spans overlap it: a selected sentence of those indices carries that gold sentence."""
    from factscout.text.sentences import sentence_spans

    text = " ".join(abstract)
    spans = sentence_spans(text)
    out, pos = [], 0
    for sentence in abstract:
        start = pos + (len(sentence) - len(sentence.lstrip()))
        end = pos + len(sentence.rstrip())
        out.append({j for j, (a, b) in enumerate(spans) if a < end and start < b})
        pos += len(sentence) + 1
    return out


def evidence_recall(
    golds: Sequence[Sequence[GoldSentence]],
    selected: Sequence[Mapping[str, set[int]]],
    read: Sequence[set[str]],
    maps: Mapping[str, list[set[int]]],
) -> dict[str, Any]:
    """How much gold rationale reached the stance model: per claim, ``selected`` gives the
    indices (in ``check``'s split) of the sentences selected from each passage and ``read`` the
    passages read; ``maps`` is :func:`split_map` of each abstract. Over the claims with a rationale:
    sentence recall, the share of claims with at least one rationale sentence selected, and the
    share of claims with an evidence abstract among the passages read."""
    total = reached = claims = claims_reached = claims_read = 0
    for gs, sel, passages in zip(golds, selected, read, strict=True):
        rat = rationale(gs)
        if not rat:
            continue
        claims += 1
        hits = [bool(maps[g.passage_id][g.index] & sel.get(g.passage_id, set())) for g in rat]
        total += len(rat)
        reached += sum(hits)
        claims_reached += any(hits)
        claims_read += any(g.passage_id in passages for g in rat)
    return {
        "claims": claims,
        "sentences": total,
        "sentences_reached": reached,
        "sentence_recall": reached / total if total else None,
        "claims_reached": claims_reached,
        "claim_recall": claims_reached / claims if claims else None,
        "claims_abstract_read": claims_read,
        "abstract_recall": claims_read / claims if claims else None,
    }


# --- the table ----------------------------------------------------------------------------------

HEADER = [
    "row",
    "verdict macro-F1",
    "change",
    "accuracy",
    "F1 supported",
    "F1 refuted",
    "F1 not enough evidence",
    "NEI precision",
    "NEI recall",
    "NEI F1",
    "direction accuracy",
]


def table_row(label: str, s: Mapping[str, Any], change: str) -> list[object]:
    nei, direction_acc = s["nei_decision"], s["direction"]["accuracy"]
    return [
        label,
        s["macro_f1"],
        change,
        s["accuracy"],
        *(s["per_class"][label_]["f1"] for label_ in LABELS),
        nei["precision"],
        nei["recall"],
        nei["f1"],
        "-" if direction_acc is None else direction_acc,
    ]


def decomposition(ceiling: Mapping[str, Any], per_model: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[list]:
    """The table's rows: the ceiling, then per stance model rows 2 and 3 with their oracle-NEI
    forms; ``change`` is the macro-F1 difference to the row above in the chain 1 -> 2 -> 3, and for
    an oracle row the difference to the same row without the oracle (what the NEI decision costs)."""
    rows = [table_row("1. rule ceiling: gold sentences, gold stances", ceiling, "-")]
    for spec, s in per_model.items():
        g, c = s["gold_sentences"], s["check"]
        rows += [
            table_row(f"2. gold sentences, stance `{spec}`", g, _change(g, ceiling, "1")),
            table_row(
                "2'. row 2, NEI by oracle", s["gold_sentences_oracle"], _change(s["gold_sentences_oracle"], g, "2")
            ),
            table_row(f"3. check (retrieved, selected), stance `{spec}`", c, _change(c, g, "2")),
            table_row("3'. row 3, NEI by oracle", s["check_oracle"], _change(s["check_oracle"], c, "3")),
        ]
    return rows


def _change(this: Mapping[str, Any], before: Mapping[str, Any], name: str) -> str:
    return f"{this['macro_f1'] - before['macro_f1']:+.4f} vs row {name}"


def summary(ceiling: Mapping[str, Any], spec: str, s: Mapping[str, Any]) -> str:
    """One sentence per stance model: where the macro-F1 between the ceiling and check goes."""
    top, g, c = ceiling["macro_f1"], s["gold_sentences"]["macro_f1"], s["check"]["macro_f1"]
    go, co = s["gold_sentences_oracle"]["macro_f1"], s["check_oracle"]["macro_f1"]
    return (
        f"Stance `{spec}`: from the rule ceiling {top:.3f}, {top - g:.3f} is lost on the gold sentences "
        f"(stance model; with the NEI decision by oracle there {top - go:.3f}) and {g - c:.3f} more in retrieval + "
        f"selection, to {c:.3f}; with the NEI decision by oracle check scores {co:.3f} ({co - c:+.3f})."
    )


def recall_text(r: Mapping[str, Any]) -> str:
    if not r["claims"]:
        return "no claim has a gold rationale"
    return (
        f"gold rationale reaching the stance model in check: {r['sentences_reached']} of {r['sentences']} sentences "
        f"({r['sentence_recall']:.1%}); claims with at least one: {r['claims_reached']} of {r['claims']} "
        f"({r['claim_recall']:.1%}); claims whose evidence abstract was among the passages read: "
        f"{r['claims_abstract_read']} of {r['claims']} ({r['abstract_recall']:.1%})"
    )


# --- data ---------------------------------------------------------------------------------------


def domain_data(domain: str, path: str | None) -> tuple[list[Claim], list[Passage], dict[str, list[str]], str]:
    """The claims, closed pool, abstract sentences and name of ``domain``'s split."""
    from factscout.datasets import load_dataset

    if domain == "checkcovid":
        from verdict_domains import domain_split

        from factscout.datasets.checkcovid import load_abstract_sentences

        claims, corpus, source = domain_split("checkcovid", path)
        return claims, corpus, load_abstract_sentences(), source
    from factscout.datasets import load_abstract_sentences
    from factscout.training.splits import read_heldout_ids
    from factscout.training.stance.pairs import scifact_dev_ids

    sci = load_dataset("scifact", "train")
    dev = scifact_dev_ids(sci.claims, read_heldout_ids())
    claims = [c for c in sci.claims if c.claim_id in dev]
    return claims, list(sci.corpus), load_abstract_sentences(), "SciFact dev part (of SciFact train)"


# --- running ------------------------------------------------------------------------------------


def score_domain(
    domain: str,
    claims: Sequence[Claim],
    abstracts: Mapping[str, Sequence[str]],
    index: Path,
    stances: Sequence[str],
    name: str,
) -> tuple[dict[str, Any], list[str]]:
    """Every row for ``domain``: the scores (``ceiling``, per stance model ``gold_sentences``,
    ``check`` and their oracle forms, ``evidence``) and notes on timing."""
    from factscout.check import Checker, CheckSettings
    from factscout.verify.stance import predict_many, to_stance

    gold = [gold_label(c) for c in claims]
    golds = [gold_sentences(c, abstracts) for c in claims]
    maps = {doc: split_map(abstracts[doc]) for doc in {g.passage_id for gs in golds for g in gs}}
    out: dict[str, Any] = {"claims": len(claims), "gold": dict(Counter(gold)), "models": {}}
    notes: list[str] = []
    shared: dict[str, Any] = {}
    found = None
    ceiling_rule: CountRule | None = None
    ceiling: list[str] = []
    for spec in stances:
        t = time.perf_counter()
        checker = Checker.from_index(index, CheckSettings(stance=spec), **shared)
        shared.setdefault("encoder", checker.encoder)
        for doc in maps:
            if checker.store[doc].text != " ".join(abstracts[doc]):
                raise SystemExit(f"{domain}: passage {doc} of the index is not its abstract's sentences joined")
        if found is None:  # retrieval does not depend on the stance model
            found = checker.retrieve(claims)
            notes.append(f"retrieval {time.perf_counter() - t:.0f} s")
            t = time.perf_counter()
        rule = checker.rule
        if ceiling_rule is None:
            ceiling_rule = rule
            ceiling = rule_verdicts([[g.as_stance() for g in gs] for gs in golds], rule)
            out["ceiling"] = verdict_scores(gold, ceiling)
            out["rule"] = repr(rule)
        model = checker.stance
        on_gold = predict_many(model, claims, [[g.as_sentence() for g in gs] for gs in golds])
        t_gold = time.perf_counter() - t
        t = time.perf_counter()
        reports = checker.judge(claims, found)
        t_check = time.perf_counter() - t
        in_check = [[to_stance(e.passage_id, x.index, x.probabilities) for e in r.evidence for x in e.sentences]
                    for r in reports]  # fmt: skip
        pred_gold = rule_verdicts(on_gold, rule)
        pred_check = [r.verdict.label for r in reports]
        oracle_gold, undecided_gold = oracle_nei(gold, on_gold, rule)
        oracle_check, undecided_check = oracle_nei(gold, in_check, rule)
        selected = [{e.passage_id: {x.index for x in e.sentences} for e in r.evidence} for r in reports]
        read = [{e.passage_id for e in r.evidence} for r in reports]
        recall = evidence_recall(golds, selected, read, maps)
        out["models"][spec] = {
            "rule": repr(rule),
            "gold_sentences": verdict_scores(gold, pred_gold),
            "gold_sentences_oracle": verdict_scores(gold, oracle_gold) | {"undecided": undecided_gold},
            "check": verdict_scores(gold, pred_check),
            "check_oracle": verdict_scores(gold, oracle_check) | {"undecided": undecided_check},
            "evidence": recall,
            "abstained": sum(r.verdict.label != r.verdict.call for r in reports),
            "sentences_per_claim": sum(map(len, in_check)) / len(claims),
        }
        notes.append(f"stance `{spec}`: gold sentences {t_gold:.0f} s, check {t_check:.0f} s")
        predicted = {"ceiling": ceiling, "gold_sentences": pred_gold, "gold_sentences_oracle": oracle_gold,
                     "check": pred_check, "check_oracle": oracle_check}  # fmt: skip
        rows = claim_rows(claims, gold, predicted, golds, selected, maps)
        write_predictions(name, f"{domain}-{spec}", rows)
        m = out["models"][spec]
        print(
            f"{domain} {spec}: ceiling {out['ceiling']['macro_f1']:.4f}, gold sentences "
            f"{m['gold_sentences']['macro_f1']:.4f}, check {m['check']['macro_f1']:.4f}, "
            f"oracle NEI {m['check_oracle']['macro_f1']:.4f}",
            file=sys.stderr,
        )
    return out, notes


def claim_rows(
    claims: Sequence[Claim],
    gold: Sequence[str],
    predicted: Mapping[str, Sequence[str]],
    golds: Sequence[Sequence[GoldSentence]],
    selected: Sequence[Mapping[str, set[int]]],
    maps: Mapping[str, list[set[int]]],
) -> list[dict[str, Any]]:
    """One prediction row per claim: its gold verdict, each row's verdict, how many gold sentences
    it has, how many of its rationale sentences check selected and how many sentences it selected."""
    out = []
    for n, claim in enumerate(claims):
        sel = selected[n]
        reached = [bool(maps[g.passage_id][g.index] & sel.get(g.passage_id, set())) for g in rationale(golds[n])]
        out.append(
            {
                "claim_id": claim.claim_id,
                "gold": gold[n],
                **{k: v[n] for k, v in predicted.items()},
                "gold_sentences_given": len(golds[n]),
                "rationale_reached": sum(reached),
                "selected_sentences": sum(map(len, sel.values())),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", default=",".join(DOMAINS), help=f"comma-separated: {', '.join(DOMAINS)}")
    parser.add_argument("--stance", action="append", help="stance model spec (repeat; default: check's, cross)")
    parser.add_argument("--checkcovid", help="a Check-COVID claims file (its JSON lines) to score instead of dev")
    parser.add_argument("--limit", type=int, default=0, help="only the first N claims per domain (smoke runs)")
    parser.add_argument("--retriever", default="hybrid", help="closed-pool index kind: hybrid | bm25 | dense")
    parser.add_argument(
        "--cache",
        type=Path,
        default=ROOT / ".factscout" / "verdict_domains",
        help="folder of the closed-pool indexes (shared with benchmarks/verdict_domains.py)",
    )
    parser.add_argument("--name", help=f"results name (default {NAME}; {NAME}_smoke with --limit)")
    args = parser.parse_args(argv)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown or not domains:
        parser.error(f"unknown domain(s) {unknown}; known: {', '.join(DOMAINS)}")
    if args.limit < 0:
        parser.error("--limit takes a positive number (0: all claims)")
    from factscout.settings import CheckSettings

    stances = list(dict.fromkeys(args.stance or [CheckSettings().stance]))
    name = args.name or (f"{NAME}_smoke" if args.limit else NAME)
    quiet()

    started = time.perf_counter()
    text: list[str] = []
    full: dict[str, Any] = {}
    headline: dict[str, Any] = {"benchmark": name, "stance": stances, "claims": {}, "macro_f1": {}}
    for domain in domains:
        claims, corpus, abstracts, source = domain_data(domain, args.checkcovid if domain == "checkcovid" else None)
        if args.limit:
            claims = claims[: args.limit]
        folder = args.cache / f"{domain}-{args.retriever}"
        index, build_s = closed_pool_index(domain, corpus, args.retriever, folder)
        t = time.perf_counter()
        scores, notes = score_domain(domain, claims, abstracts, index, stances, name)
        scores["source"] = source
        full[domain] = scores
        ceiling = scores["ceiling"]
        headline["claims"][domain] = len(claims)
        headline["macro_f1"][domain] = {
            "ceiling": round(ceiling["macro_f1"], 4),
            **{
                shown: {spec: round(m[key]["macro_f1"], 4) for spec, m in scores["models"].items()}
                for shown, key in (
                    ("gold_sentences", "gold_sentences"),
                    ("check", "check"),
                    ("oracle_nei", "check_oracle"),
                )
            },
        }
        built = f"built in {build_s:.0f} s" if build_s else "reused from the cache"
        text += [
            f"### {source}: {len(claims)} claims, {scores['gold']}",
            "",
            markdown_table(HEADER, decomposition(ceiling, scores["models"])),
            "",
            *(summary(ceiling, spec, m) for spec, m in scores["models"].items()),
            "",
            *(
                f"Stance `{spec}`, {recall_text(m['evidence'])}; {m['sentences_per_claim']:.1f} sentences selected "
                f"per claim; claims left undecided under the oracle: {m['gold_sentences_oracle']['undecided']} "
                f"(row 2'), {m['check_oracle']['undecided']} (row 3'); abstained: {m['abstained']}."
                for spec, m in scores["models"].items()
            ),
            "",
            f"Count rule {scores['rule']} (the ceiling's). Closed pool: {len(corpus)} passages, {args.retriever} "
            f"index {built}; {'; '.join(notes)}; {time.perf_counter() - t:.0f} s in all on {machine()}.",
            "",
        ]
    total = time.perf_counter() - started
    headline["seconds"] = round(total, 1)
    command = shlex.join(["python", "benchmarks/verdict_loss.py", *(sys.argv[1:] if argv is None else argv)])
    text.append(f"Reproduce: `{command}`")
    folder = RESULTS / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scores.json").write_text(json.dumps({"headline": headline, "domains": full}, indent=1) + "\n")
    publish(name, "\n".join(text), headline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
