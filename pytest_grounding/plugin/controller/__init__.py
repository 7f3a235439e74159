"""Where results gather: the xdist controller, or the only process."""
