"""How often the garbage collector runs in the processes that play and score calls.

An attempt allocates tens of thousands of short-lived containers (request and reply bodies, messages,
the verdict's details), and a run keeps each attempt's result for its pages. At CPython's default
first threshold (700 allocations) the collector ran thousands of times a run, and each full pass
walked the whole heap again: an oracle run of the 180 tasks x 5 attempts spent 4.7 of its 31.8 CPU
seconds collecting (gc.callbacks, AMD EPYC, Python 3.11). At 10,000 it spent 1.7. Reference counting
still frees almost everything at once; only objects in reference cycles wait a little longer.

Called where a process of ours starts (the tool server, `callm`) and by a benchmark run (a pytest run
with `--callm-model`): a test session that merely has the plugin installed keeps its own settings.
"""

from __future__ import annotations

import gc

FIRST_THRESHOLD = 10_000


def pace() -> None:
    """Raise the first threshold to FIRST_THRESHOLD; a collector that is off, or already set higher, is
    left as it is."""
    first, *older = gc.get_threshold()
    if 0 < first < FIRST_THRESHOLD:
        gc.set_threshold(FIRST_THRESHOLD, *older)
