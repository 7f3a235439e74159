"""One sample through one detector to one record: read, time, predict, score. No pytest."""
