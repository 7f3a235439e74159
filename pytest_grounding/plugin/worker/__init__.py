"""Where samples are predicted: each xdist worker, or the only process."""
