"""The verdict models: the learned aggregator over top-k stances (:mod:`.aggregator`, its evidence
pass :mod:`.evidence` and card :mod:`.aggregator_card`) and the claim + evidence classifier
(:mod:`.classifier`)."""
