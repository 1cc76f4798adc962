"""Pagination: from one page's request and response to the next page's request (or None).

Styles (``pagination.type``):

- ``link_header``: follow the ``Link`` header's ``rel="next"`` URL (RFC 8288; GitHub style).
- ``next_url``: follow a URL in the body (``pagination.next.pointer``), absolute or relative.
- ``cursor``: send the body's token (``pagination.cursor.pointer``) as ``pagination.cursor.param``.
- ``offset``: ``offset``/``limit`` parameters; stop after a short page.
- ``page``: page numbers from ``pagination.page.start``; stop after an empty (or short) page.

A poll stops at the last page, or at ``pagination.max.pages`` (logged) so a server that always
answers "next" cannot keep one poll going forever. A next request identical to the current one
also stops the poll for the same reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from connectors.http._records import resolve, split_path
from connectors.http.config import HttpPollConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageRequest:
    """One page to fetch. ``url`` may already carry a query (followed links do)."""

    url: str
    params: dict[str, str] = field(default_factory=dict)
    number: int = 0  # pages fetched before this one in the current poll


def first_page(c: HttpPollConfig, url: str, params: dict[str, str]) -> PageRequest:
    params = dict(params)
    if c.pagination_type == "offset":
        params[c.pagination_offset_param] = "0"
        if c.pagination_limit_param:
            params[c.pagination_limit_param] = str(c.pagination_limit)
    elif c.pagination_type == "page":
        params[c.pagination_page_param] = str(c.pagination_page_start)
        if c.pagination_limit_param:
            params[c.pagination_limit_param] = str(c.pagination_limit)
    return PageRequest(url, params)


def next_page(
    c: HttpPollConfig, page: PageRequest, response: httpx.Response, body: Any, count: int
) -> PageRequest | None:
    """The request for the page after ``page``, or None when ``page`` was the last."""
    kind = c.pagination_type
    nxt: PageRequest | None = None
    if kind == "link_header":
        link = response.links.get("next", {}).get("url")
        nxt = _follow(page, str(response.url), link)
    elif kind == "next_url":
        link = resolve(body, split_path(c.pagination_next_pointer))
        nxt = _follow(page, str(response.url), link if isinstance(link, str) else None)
    elif kind == "cursor":
        token = resolve(body, split_path(c.pagination_cursor_pointer))
        if token not in (None, "", False):
            nxt = replace(page, params={**page.params, c.pagination_cursor_param: str(token)})
    elif kind == "offset":
        if count and not (c.pagination_limit_param and count < c.pagination_limit):
            offset = int(page.params.get(c.pagination_offset_param, "0")) + count
            nxt = replace(page, params={**page.params, c.pagination_offset_param: str(offset)})
    elif kind == "page" and count and not (c.pagination_limit_param and count < c.pagination_limit):
        number = int(page.params.get(c.pagination_page_param, "0")) + 1
        nxt = replace(page, params={**page.params, c.pagination_page_param: str(number)})
    if nxt is None or (nxt.url, nxt.params) == (page.url, page.params):
        return None
    nxt = replace(nxt, number=page.number + 1)
    if nxt.number >= c.pagination_max_pages:
        log.warning("stopping after pagination.max.pages=%d pages", c.pagination_max_pages)
        return None
    return nxt


def _follow(page: PageRequest, base: str, link: str | None) -> PageRequest | None:
    """A followed link replaces URL and query: the server's link already carries its state."""
    if not link:
        return None
    return PageRequest(str(httpx.URL(base).join(link)), {}, page.number)
