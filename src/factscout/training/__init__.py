"""Training apart from running: one subpackage per trained model over one harness.

``factscout train <model>`` (:mod:`factscout.cli.train`) runs them; :data:`.base.TRAINERS` lists
them. The models: :mod:`.stance` (the stance head and cross-encoder and the pairs they share),
:mod:`.rerank`, :mod:`.dense`, :mod:`.selector`, :mod:`.verdict` (the learned aggregator and the
classifier), :mod:`.qgen`, :mod:`.rewrite` (the learned rewrite policies) and :mod:`.temporal`.
The harness beside them: :mod:`.splits` (the held-out SciFact claims and one seeded
:func:`~.splits.folds_of`), :mod:`.loop` (AdamW with linear warm-up and decay, one optimizer
step), :mod:`.cards` (metrics and model-card writers; dataset licences from each loader's
``SOURCE``). Runtime packages never import this package; shared network pieces live in
:mod:`factscout.nn`, shipped weights beside the step that loads them (``<step>/models/``).
"""
