"""The qgen query generator's recipe (:mod:`.trainer`)."""
