"""Every use of huggingface_hub's private or undocumented names, in one place.

Pinned: huggingface_hub 2.4.0 (requirements.txt). tests/test_private_names.py fails, naming the
name and this version, when the installed huggingface_hub no longer has one of
``PRIVATE_NAMES``; and no module outside this one (and serving/streamlit_private.py for
Streamlit) may touch a private name of huggingface_hub (an AST scan in the same test).

What the public API already does is used as such: progress comes through ``http_get``'s public
``tqdm_class`` parameter (no ``_tqdm_bar``), the snapshot link and the ref through
``hf_hub_download``, the client through ``set_client_factory``. The names that remain, and why:

- ``file_download.http_get`` (not in the documented API): the one call that resumes a body with
  a Range request into a file we keep. ``hf_hub_download`` writes each try to a file unique to
  it and deletes it on failure (2.4), so a broken download would start again from zero.
- its ``_nb_retries`` parameter, set to 0: ``http_get`` otherwise retries a timed-out body up to
  five times (and counts again from five whenever a byte came), so a download stopped as stalled
  would linger for minutes; the stall is decided by the caller's watchdog (serving/hub.py).
- ``utils._http._GLOBAL_CLIENT_FACTORY`` (and ``default_client_factory``, its initial value):
  there is no public getter for the client factory in use, and a managed download wraps it
  (adding a hook that refuses a stopped download's requests) rather than replacing a factory
  someone else set (a proxy, certificates); it is put back when the last download ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO

import httpx2
from huggingface_hub.file_download import http_get

PINNED = "huggingface_hub 2.4.0"

# (module, attribute or function, parameter or ""): checked by tests/test_private_names.py.
PRIVATE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("huggingface_hub.file_download", "http_get", ""),
    ("huggingface_hub.file_download", "http_get", "_nb_retries"),
    ("huggingface_hub.file_download", "http_get", "tqdm_class"),
    ("huggingface_hub.utils._http", "_GLOBAL_CLIENT_FACTORY", ""),
    ("huggingface_hub.utils._http", "default_client_factory", ""),
)


def client_factory_in_use() -> Callable[[], httpx2.Client]:
    """The factory huggingface_hub makes its shared client with (someone's own, or its default)."""
    from huggingface_hub.utils import _http

    return getattr(_http, "_GLOBAL_CLIENT_FACTORY", _http.default_client_factory)


def get_range(url: str, out: BinaryIO, *, resume: int, expected_size: int | None,
              headers: dict[str, str], name: str, bar: type[Any]) -> None:
    """The body of ``url`` from byte ``resume`` on, appended to ``out``, with no retry inside;
    ``bar`` is a tqdm-like class huggingface_hub makes one of and calls ``update(n)`` on."""
    http_get(url, out, resume_size=resume, expected_size=expected_size, headers=headers,
             displayed_filename=name, tqdm_class=bar, _nb_retries=0)
