"""Where an unauthenticated listener may listen: loopback only.

On a listener without authentication (PLAINTEXT, or SSL without a required client
certificate) anyone who can reach its port can read and write every topic, including the
hub's internal topics, where a few records create and run a connector (docs/security.md). On
a loopback address only processes of this machine can; on any other address the whole network
could. ``check_listener`` refuses the latter before a socket is opened, with one line saying
what to do. ``sluice broker`` accepts an explicit ``--allow-insecure-network`` for networks
where every peer is trusted (a private container network); ``sluice up`` has no such switch,
its broker is the hub's private store. A listener whose clients must authenticate
(SASL_PLAINTEXT, SASL_SSL, or SSL with ``ssl.client.auth=required``) may listen anywhere:
:func:`check_listeners`.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from broker.errors import InsecureListenerError as InsecureListenerError

if TYPE_CHECKING:
    from broker.config import BrokerConfig


def is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") in {"localhost", "localhost.localdomain", "ip6-localhost"}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listener(host: str, *, allow_insecure_network: bool = False, flag: str = "") -> None:
    """Raises InsecureListenerError unless ``host`` is loopback or the opt-in was given.

    ``flag`` names the command-line switch that opts in, for the message (empty: none).
    """
    if is_loopback(host) or allow_insecure_network:
        return
    hint = f", or pass {flag} on a network where every machine is trusted" if flag else ""
    raise InsecureListenerError(
        f"refusing to run the broker on {host}: that listener does not authenticate clients, so "
        "anyone who can reach the port could read and write every topic (the hub's configs "
        f"included). Listen on 127.0.0.1 (the default), use a SASL_SSL listener{hint}."
    )


def authenticates(config: BrokerConfig, name: str) -> bool:
    """True if every client of listener ``name`` proves who it is before being served."""
    from broker.security.listeners import listener_setting

    listener = config.listener(name)
    if listener.sasl:
        return True
    auth = listener_setting(config.security, listener.name, "ssl.client.auth") or "none"
    return listener.tls and auth.lower() == "required"


def check_listeners(
    config: BrokerConfig, *, allow_insecure_network: bool = False, flag: str = ""
) -> list[str]:
    """``check_listener`` for every listener that does not authenticate its clients; returns
    the hosts of those that bind beyond loopback (for the caller's warning)."""
    open_hosts = []
    for listener in config.effective_listeners():
        if authenticates(config, listener.name):
            continue
        check_listener(listener.host, allow_insecure_network=allow_insecure_network, flag=flag)
        if not is_loopback(listener.host):
            open_hosts.append(listener.host)
    return open_hosts
