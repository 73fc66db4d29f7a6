"""The stance models: the head over frozen MiniLM features (:mod:`.head`) and the cross-encoder
(:mod:`.cross`, run on a lent GPU by :mod:`.gpu`), the training pairs they share (:mod:`.pairs` from
:mod:`.sources`, counterfactual edits in :mod:`.augment`, the consistency pairs in
:mod:`.consistency`), their evaluation (:mod:`.evaluation`, :mod:`.domains`) and model cards."""
