"""Tools for task authors: `callm lock`, `callm lint` and `callm new-task`."""
