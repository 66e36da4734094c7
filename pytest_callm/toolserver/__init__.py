"""The tool server that runs a pack's tools over one SQLite database per call, and its client."""
