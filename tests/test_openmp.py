"""The server asks OpenMP for passive waiting before torch loads it (frame/openmp.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

# Imports app.py as the server does at start-up, then the model's code; the audit hook reads the
# variable at the moment torch is imported, which is when its OpenMP runtime reads it.
_PROBE = """
import os, sys
seen = []
def hook(event, args):
    if event == "import" and args[0] == "torch" and not seen:
        seen.append(os.environ.get("OMP_WAIT_POLICY"))
sys.addaudithook(hook)
import app
import core.models
print(seen[0] if seen else "torch not imported")
"""


def _policy_when_torch_loads(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_value is not None:
        env["OMP_WAIT_POLICY"] = env_value
    done = subprocess.run([sys.executable, "-c", _PROBE], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_server_asks_for_passive_waiting_before_torch_loads():
    assert _policy_when_torch_loads(None) == "PASSIVE"


def test_a_policy_chosen_in_the_environment_is_kept():
    assert _policy_when_torch_loads("ACTIVE") == "ACTIVE"
