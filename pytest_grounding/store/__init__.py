"""Files the plugin reads and writes: reports, predictions, the answer cache; the outputs a run writes."""
