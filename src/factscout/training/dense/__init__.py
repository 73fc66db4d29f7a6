"""The dense retriever's encoder adapter: its recipe (:mod:`.trainer`) and model card (:mod:`.card`)."""
