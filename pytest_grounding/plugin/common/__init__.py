"""The plugin's part every process runs the same way: the plan, options and settings, the items."""
