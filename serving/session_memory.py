"""What Streamlit keeps of sessions that have ended, let go.

A session's download buttons are callables (components/downloads.py: built on click) that hold
the arrays they would write. Streamlit's media manager keeps them per session until that
session shuts down; but a tab that closes leaves a *disconnected* session, kept for
``server.disconnectedSessionTTL`` seconds for a reconnect and then dropped from its store without
a shutdown, so its callables (and at 512 tokens tens of MB of arrays each, no longer in any
budgeted cache) stayed for the life of the server. The results-cache sweeper
(serving/budget.py) calls :func:`forget_ended_sessions` every few seconds.

This reads Streamlit 1.67's runtime internals (the session manager's list, the media manager's
per-session index); if they change, it does nothing rather than fail.
"""

from __future__ import annotations


def forget_ended_sessions() -> int:
    """Clear the media references of sessions Streamlit no longer has; how many there were."""
    try:
        from streamlit import runtime

        if not runtime.exists():
            return 0
        rt = runtime.get_instance()
        live = {info.session.id for info in rt._session_mgr.list_sessions()}
        media = rt.media_file_mgr
        with media._lock:
            held = set(media._files_by_session_and_coord) | set(media._deferred_ids_by_session)
        gone = held - live
        for session_id in gone:
            media.clear_session_refs(session_id)
            rt.dataframe_source_mgr.clear_all_for_session(session_id)
        if gone:
            media.remove_orphaned_files()
        return len(gone)
    except Exception:   # another Streamlit's internals: leave them alone
        return 0
