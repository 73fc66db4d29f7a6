"""The learned rewrite policies: decision transformer and classifier (:mod:`.trainer`), the
token-pointing policy (:mod:`.pointer`), the candidate ranker (:mod:`.ranker`) and the
pseudo-claims their trajectories are searched for (:mod:`.pseudo_claims`)."""
