"""The BIO evidence selector: its recipe (:mod:`.trainer`) and model card (:mod:`.card`)."""
