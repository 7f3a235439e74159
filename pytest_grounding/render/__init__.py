"""Figures to text, markdown, HTML, plots and files: every output the run writes."""
