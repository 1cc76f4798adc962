"""Errors the runtime (herder) raises, each with the HTTP status the REST API answers with.

Tree::

    HerderError (500)
    ├── NotFoundError (404)           no such connector / task / plugin
    ├── AlreadyExistsError (409)      POST /connectors with a taken name
    ├── ConflictError (409)           e.g. a rebalance is in progress, or the connector must be
    │                                 STOPPED first (offset changes)
    └── BadRequestError (400)         malformed request beyond config validation

Config problems are ``hub.api.ConfigError`` (400, with per-field reasons).
"""

from __future__ import annotations


class HerderError(Exception):
    status_code = 500


class NotFoundError(HerderError):
    status_code = 404


class AlreadyExistsError(HerderError):
    status_code = 409


class ConflictError(HerderError):
    status_code = 409


class BadRequestError(HerderError):
    status_code = 400
