"""How torch's OpenMP threads wait between operations, set before torch is first imported.

By default GNU OpenMP (the runtime of torch's CPU build) keeps its threads spinning on the
cores for a while after every parallel operation, ready for the next one. A forward pass of
BERT is hundreds of short operations, so on a machine where the browser, the other sessions'
scripts and the server's event loop need the same cores (a teacher's laptop; the 2-core
servers of deploy/), the spinning threads take the cores those need. Measured in Chromium on
2 cores, median of 7 new sentences: the app's frame with the model's run went from 1.85x the
frame alone to 1.25x with passive waiting, and /stages from 2.18x to 1.68x; a forward pass on
an idle machine was as fast either way (16 tokens 16.0 ms against 15.9; 800 words 150 ms
against 148). One thread instead of two would spin less still, but makes a 512-token input
1.7x slower when a single user has both cores.
"""

from __future__ import annotations

import os
import sys

WAIT_POLICY = "OMP_WAIT_POLICY"


def wait_passively() -> bool:
    """Ask OpenMP to put its idle threads to sleep, unless the environment already chose.

    OpenMP reads the variable once, when torch loads it: True if this call was in time (torch
    not imported yet), False if it came too late to matter.
    """
    os.environ.setdefault(WAIT_POLICY, "PASSIVE")
    return "torch" not in sys.modules
