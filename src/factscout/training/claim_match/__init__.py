"""``factscout train claim-match``: the learned fusion that ranks fact-checks for a tweet.

:mod:`.config` holds the options (one dataclass, whose defaults the CLI shows), :mod:`.train`
the recipe (candidates from a CheckThat-only memory, a logistic model fitted on train, chosen
on dev with its shown-match threshold, dev-test reported) and :mod:`.card` the model card.
"""
