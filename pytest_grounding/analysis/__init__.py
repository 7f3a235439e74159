"""Records to figures: summaries, headlines, gates, baselines, cost, reproduction, comparisons. Pure."""
