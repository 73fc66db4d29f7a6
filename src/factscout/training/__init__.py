"""Training apart from running: one module per trained model over one harness.

``factscout train <model>`` (:mod:`.cli`) runs them; :data:`.base.TRAINERS` lists them. The
harness: :mod:`.splits` (the held-out SciFact claims and one seeded :func:`~.splits.folds_of`),
:mod:`.loop` (AdamW with linear warm-up and decay, one optimizer step), :mod:`.cards` (metrics
and model-card writers; dataset licences from each loader's ``SOURCE``). Runtime packages never
import this package; shared network pieces live in :mod:`factscout.nn`, shipped weights beside
the step that loads them (``<step>/models/``).
"""
