"""Train the check-worthiness classifier (``factscout train checkworthy``): the data and its
overlaps (:mod:`.data`), the linear model and the MiniLM fine-tune (:mod:`.linear`,
:mod:`.finetune`), and the run that compares them and ships one (:mod:`.trainer`)."""
