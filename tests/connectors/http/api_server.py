"""A real HTTP server for the HTTP connector tests (``http.server`` on 127.0.0.1, port 0).

It serves one list of items (``server.items``, mutable by tests) in every pagination style, an
incremental endpoint filtering on ``updated_at``, scripted failures and a Prometheus endpoint:

- ``/page?page=&limit=``, ``/offset?offset=&limit=``, ``/cursor?cursor=`` (body ``next_cursor``),
  ``/link?after=`` (``Link: <...>; rel="next"``), ``/next?after=`` (body ``next``, relative URL)
- ``/since?since=&limit=``: items with ``updated_at >= since`` in order, ``next_cursor`` pages
- ``/script/<name>``: answers from ``server.scripts[name]``, a list of (status, headers, body)
  consumed one per request (the last one repeats)
- ``/metrics``: ``server.metrics`` as text/plain; version=0.0.4
- ``/ndjson``: the items as NDJSON

Every request is appended to ``server.requests`` (path with query, headers) for assertions.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class ApiServer:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.scripts: dict[str, list[tuple[int, dict[str, str], str]]] = {}
        self.metrics = ""
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, q: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        items = self.items
        limit = int(q.get("limit", "3"))
        route = path.strip("/").split("/")
        if route[0] == "page":
            page = int(q.get("page", "1"))
            return _json({"data": items[(page - 1) * limit : page * limit]})
        if route[0] == "offset":
            offset = int(q.get("offset", "0"))
            return _json({"data": items[offset : offset + limit]})
        if route[0] in ("cursor", "link", "next"):
            start = int(q.get("cursor", q.get("after", "0")))
            chunk = items[start : start + limit]
            more = start + limit < len(items)
            if route[0] == "cursor":
                return _json({"data": chunk, "next_cursor": str(start + limit) if more else None})
            if route[0] == "next":
                return _json(
                    {"data": chunk, "next": f"next?after={start + limit}" if more else None}
                )
            headers = (
                {"Link": f'<{self.url}/link?after={start + limit}>; rel="next"'} if more else {}
            )
            return _json({"data": chunk}, headers)
        if route[0] == "since":
            since = q.get("since", "")
            newer = [i for i in items if str(i["updated_at"]) >= since]
            start = int(q.get("cursor", "0"))
            more = start + limit < len(newer)
            body = {
                "data": newer[start : start + limit],
                "next_cursor": str(start + limit) if more else None,
            }
            return _json(body)
        if route[0] == "ndjson":
            text = "".join(json.dumps(i) + "\n" for i in items)
            return 200, {"Content-Type": "application/x-ndjson"}, text.encode()
        if route[0] == "metrics":
            return 200, {"Content-Type": "text/plain; version=0.0.4"}, self.metrics.encode()
        if route[0] == "script":
            steps = self.scripts[route[1]]
            status, headers, body = steps.pop(0) if len(steps) > 1 else steps[0]
            return status, headers, body.encode()
        return 404, {}, b"no such path"


def _json(body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()


def _handler(server: ApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else each response waits for a delayed ACK

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            with server.lock:
                server.requests.append((self.path, dict(self.headers)))
                status, headers, body = server.answer(parts.path, query)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
