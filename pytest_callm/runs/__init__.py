"""Runs: per-process wiring (`runtime`), attempts played, resumed or rescored, run directories,
`callm compare`, the summary tables and the HTML report."""
