"""Loaders for the fact-checking datasets factscout is tested and benchmarked on.

``load_dataset(name, split=None, root=None) -> Dataset`` reads one split from ``root`` (default:
``$FACTSCOUT_DATA`` or ``../shared/data``); ``DATASETS`` lists the names. Each dataset module has
a ``SOURCE`` (public location, licence, paper) and a ``download(dest)`` that users with internet
call explicitly; nothing is ever downloaded implicitly.

======================  ==========================  =========================================
name                    splits (default first)      what
======================  ==========================  =========================================
``scifact``             train, dev, test            claims + 5,183 abstracts, qrels = cited docs
``scifact_mini``        train                       30 claims, 200 abstracts
``averitec``            train, dev                  dated claims, gold question decompositions
``averitec_mini``       train                       25 claims
``averitec_beir``       train, dev                  claims + closed gold-answer pool + qrels
``multifc``             train, dev, test            dated claims + their dated Google snippets
``multifc_mini``        dev                         40 claims, 377 snippets
``checkthat2022``       train, dev, dev-test        tweets + 14,231 Snopes claims + qrels
``claimdecomp``         dev, test                   literal / implied yes-no sub-questions
``hover``               dev, test, train            multi-hop claims, hop counts (no corpus)
``covidfact``           all                         claims + gold evidence sentence pool + qrels
``quantemp``            test, taxonomy              generated sub-questions; numerical taxonomy
``healthver``           dev                         health claim + evidence rows (dev part by topic)
``checkcovid``          dev, train                  news claims + 347 CORD-19 abstracts + qrels
``citint``              train, dev                  citation sentences + 3,063 cited abstracts
``anli``                dev, r1, r2, r3             adversarial NLI pairs (hypothesis as claim)
``sick``                all, train, trial, test     NLI pairs, both directions as two claims
``mnli``                dev_matched, contradicting  MultiNLI dev-matched pairs (split ``all``: both)
``snli``                dev, test                   SNLI pairs with e-SNLI explanations
``snli_cf``             train, dev, test            counterfactually revised SNLI pairs
``breaking_nli``        test                        one-word-replaced SNLI pairs (lexical inference)
``fever_symmetric``     dev, test, full, generated  claim / evidence pairs without claim-only bias
``sufficient_facts``    fever, hover, vitaminc      claims with reduced evidence: enough or not
``wice``                dev, test                   Wikipedia claims vs their cited articles
``rte``                 train, dev                  GLUE RTE two-way entailment (auxiliary)
``claimbuster``         crowdsourced, groundtruth   debate sentences, three-way check-worthiness
``checkthat2021_1a``    train, dev, test            COVID-19 tweets, check-worthy or not
``checkthat2021_1b``    train, dev, test            debate / speech transcripts, check-worthy lines
``checkthat2022_1a``    train, dev, dev_test, test  COVID-19 tweets with a claim, check-worthy or not
``checkthat2022_1b``    train, dev, dev_test, test  COVID-19 tweets, holds a verifiable claim or not
======================  ==========================  =========================================
"""

from factscout.datasets import (  # noqa: F401  (importing registers the loaders)
    anli,
    averitec,
    breaking_nli,
    checkcovid,
    checkthat,
    checkworthy,
    citint,
    claimdecomp,
    covidfact,
    fever_symmetric,
    healthver,
    hover,
    mnli,
    multifc,
    quantemp,
    rte,
    scifact,
    sick,
    snli,
    snli_cf,
    sufficient_facts,
    wice,
)
from factscout.datasets.base import DATASETS, Dataset, DatasetSource, Loader, data_root, load_dataset
from factscout.datasets.passages import sentence_windows, split_document, split_passages
from factscout.datasets.scifact import load_abstract_sentences

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetSource",
    "Loader",
    "data_root",
    "load_abstract_sentences",
    "load_dataset",
    "sentence_windows",
    "split_document",
    "split_passages",
]
