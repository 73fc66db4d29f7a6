"""The cross-encoder re-ranker: its recipe (:mod:`.trainer`) and model card (:mod:`.card`)."""
