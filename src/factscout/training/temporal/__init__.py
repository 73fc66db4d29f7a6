"""The joint veracity + evidence-ranking models on MultiFC: recipe (:mod:`.trainer`), the examples
(:mod:`.data`) and the validation protocol (:mod:`.protocol`)."""
