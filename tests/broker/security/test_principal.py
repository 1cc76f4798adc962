"""The principal a connection acts as (``Connection.principal``, copied to every
``RequestContext``): the certificate subject on an SSL listener with client authentication,
``User:<name>`` after SASL, ``User:ANONYMOUS`` otherwise. In process, so the broker's own
connection objects can be inspected."""

from __future__ import annotations

import asyncio
import ssl
import struct
from pathlib import Path

from broker.app import running_broker
from broker.config import BrokerConfig
from broker.security.listeners import parse_listeners
from tests.fixtures.tls import CLIENT_SUBJECT, TlsFiles

API_VERSIONS = struct.pack(">hhih", 18, 0, 7, 1) + b"t"


async def _api_versions(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(struct.pack(">i", len(API_VERSIONS)) + API_VERSIONS)
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    await reader.readexactly(size)


def test_principals_by_listener(tmp_path: Path, tls_files: TlsFiles) -> None:
    config = BrokerConfig(
        data_dir=tmp_path, port=0,
        listeners=parse_listeners("PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"),
        security={
            "listener.name.ssl.ssl.keystore.key": tls_files.server_key.read_text(),
            "listener.name.ssl.ssl.keystore.certificate.chain": tls_files.server_cert.read_text(),
            "listener.name.ssl.ssl.truststore.location": str(tls_files.ca),
            "listener.name.ssl.ssl.client.auth": "required",
        },
    )  # fmt: skip

    async def run() -> list[str]:
        async with running_broker(config) as broker:
            plain_port = broker.config.listener("PLAINTEXT").port
            ssl_port = broker.config.listener("SSL").port
            client_ctx = ssl.create_default_context(cafile=str(tls_files.ca))
            client_ctx.load_cert_chain(str(tls_files.client_cert), str(tls_files.client_key))
            r1, w1 = await asyncio.open_connection("127.0.0.1", plain_port)
            r2, w2 = await asyncio.open_connection("127.0.0.1", ssl_port, ssl=client_ctx)
            await _api_versions(r1, w1)
            await _api_versions(r2, w2)
            seen = sorted(
                f"{c.listener} {c.principal}"
                for server in broker._servers
                for c in server._connections
            )
            for w in (w1, w2):
                w.close()
            return seen

    assert asyncio.run(run()) == ["PLAINTEXT User:ANONYMOUS", f"SSL User:{CLIENT_SUBJECT}"]
