"""Where to open the app, printed in the terminal once the server answers.

Streamlit's own welcome lines (off in .streamlit/config.toml) are printed after the port is
bound and before the app is loaded, and on a headless server (this app's setting, so that a
first start never stops to ask for an e-mail address) they include an "External URL" that
Streamlit finds by asking checkip.amazonaws.com. The server answered no one meanwhile: 0.11 s
here, the import of `requests` and a failed lookup; with a network whose name server does not
answer (a classroom's Wi-Fi with no way out) 5.7 s per start, the lookup waiting for the name
server's timeout (bench/HISTORY.md, 2026-12-07). A classroom has no use for the address the
internet sees; these lines are Streamlit's Local and Network URLs.
"""

from __future__ import annotations

import click
from streamlit import config, net_util
from streamlit.web.server import server_util

TITLE = "You can now view BERT Embedding Explorer in your browser."
WILDCARDS = ("", "0.0.0.0", "::")   # noqa: S104 - the addresses meaning "every interface"


def welcome_lines() -> list[tuple[str, str]]:
    """(name, URL) pairs: the address the server was told to use, or, when it listens on every
    interface, this machine's own name and its address on the local network."""
    if config.is_manually_set("browser.serverAddress"):   # the address a proxy or a host gives
        return [("URL", server_util.get_url(config.get_option("browser.serverAddress")))]
    address = config.get_option("server.address") or ""
    if address not in WILDCARDS:
        return [("URL", server_util.get_url(address))]
    lines = [("Local URL", server_util.get_url("localhost"))]
    internal = net_util.get_internal_ip()   # no packet is sent: the route is only looked up
    if internal:
        lines.append(("Network URL", server_util.get_url(internal)))
    return lines


def print_welcome() -> None:
    """The title and the URLs, in Streamlit's colours."""
    click.secho("")
    click.secho(f"  {TITLE}", fg="blue", bold=True)
    click.secho("")
    for name, url in welcome_lines():
        click.secho(f"  {name}: ", nl=False, fg="blue")
        click.secho(url, bold=True)
    click.secho("", nl=True)
