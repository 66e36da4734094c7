"""The pytest layer, and the only part of the package that imports pytest: options, collection of
task files, fixtures, hooks and the summary."""
