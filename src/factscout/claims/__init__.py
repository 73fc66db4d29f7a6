"""Claims in a text: which sentences are worth checking (:mod:`factscout.claims.checkworthy`)."""

from factscout.claims.checkworthy import CheckworthyModel, CheckworthyScore, load_checkworthy

__all__ = ["CheckworthyModel", "CheckworthyScore", "load_checkworthy"]
