"""Standard file formats: JSONL, BEIR corpus/queries/qrels, TREC runs and qrels."""
