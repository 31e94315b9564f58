"""What Streamlit keeps of sessions that have ended, let go.

A session's download buttons are callables (components/downloads.py: built on click) that hold
the arrays they would write. Streamlit's media manager keeps them per session until that
session shuts down; but a tab that closes leaves a *disconnected* session, kept for
``server.disconnectedSessionTTL`` seconds for a reconnect and then dropped from its store without
a shutdown, so its callables (and at 512 tokens tens of MB of arrays each, no longer in any
budgeted cache) stayed for the life of the server. Nor was it dropped on time: Streamlit's
store of disconnected sessions lets an expired one go only on its next write, and once a class
has gone nothing writes, so each session stayed with its fragments' arguments (a page's
context: the Encoder's held 50 MB of attention weights at 512 tokens). The results-cache
sweeper (serving/budget.py) calls :func:`forget_ended_sessions` every few seconds.

Which sessions live and which the media manager holds are read from Streamlit's internals, all
in serving/streamlit_private.py (tests/test_private_names.py says when an upgrade removed one).
"""

from __future__ import annotations

import logging

from serving import streamlit_private

_LOG = logging.getLogger(__name__)
_WARNED: list[bool] = []


def forget_ended_sessions() -> int:
    """Drop the stored sessions whose time to reconnect has passed, and clear the media
    references of sessions Streamlit no longer has; how many sessions were let go of either way
    (the sweeper then collects the cycles they leave).

    Streamlit internals that moved (an upgrade past the pinned version) are said once in the log
    and leave the clean-up undone; any other error is the caller's to log (the sweeper's).
    """
    try:
        reaped = streamlit_private.reap_expired_sessions()
        live = streamlit_private.session_ids()
        if live is None:
            return 0
        gone = streamlit_private.media_session_ids() - live
    except AttributeError as exc:   # a private name gone: tests/test_private_names.py says which
        if not _WARNED:
            _WARNED.append(True)
            _LOG.warning("ended sessions' files are not let go: Streamlit's internals differ "
                         "from %s (%s)", streamlit_private.PINNED, exc)
        return 0
    streamlit_private.forget_session_media(gone)
    return reaped + len(gone)
