"""The machine and software the figures were measured on, printed above the table."""

from __future__ import annotations

import os
import platform
from importlib.metadata import version

import psutil


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def describe(chromium: str, load_at_start: str) -> list[str]:
    """Markdown bullet lines: hardware, load, and the versions that matter for the figures."""
    import torch

    cores = len(os.sched_getaffinity(0))
    ram = psutil.virtual_memory().total / 1e9
    packages = ", ".join(
        f"{name} {version(name)}" for name in ("torch", "transformers", "streamlit", "playwright")
    )
    return [
        f"- CPU: {cpu_model()}, {cores} cores available (nproc), {ram:.1f} GB RAM",
        f"- Load average (1/5/15 min): {load_at_start} at start, {load_average()} at the end",
        f"- Python {platform.python_version()}; {packages}; torch threads: "
        f"{os.environ.get('BERT_EXPLORER_TORCH_THREADS', '1')} per model run in the app server, "
        f"{torch.get_num_threads()} in part 1",
        f"- Browser: Debian Chromium {chromium} (headless, via Playwright)",
        f"- OS: {platform.platform()}",
    ]
