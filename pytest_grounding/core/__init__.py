"""The domain's types: boxes, samples, predictions, targets, the record and its vocabularies. No pytest, no I/O."""
