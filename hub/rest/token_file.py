"""The generated REST token: ``<data dir>/hub.token``, written once, readable by its owner only.

Why a file: the REST API requires a credential by default, and a first ``sluice up`` must work
without the user inventing one. The hub generates 32 random bytes (URL-safe base64) on its
first start and keeps them in the data directory, so a restart, the ``sluice`` CLI run by the
same user on the same machine, and a user pasting it into the console's sign-in form all use
the same token. Anyone who can read the file controls the hub, so it is created with mode 0600
(``O_EXCL``: never through a pre-planted file or symlink) and a looser mode found later is
tightened with a warning.

Format: the token on one line, nothing else. Deleting the file and restarting the hub makes a
new token (sessions of the console signed in with the old one end at that restart).

The token itself is never logged; the start-up line names the file and how to use it. This
module imports no web framework: ``sluice connectors`` reads the token through it.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hub.rest._loopback import is_loopback
from hub.rest._settings import secret, setting

log = logging.getLogger(__name__)

TOKEN_FILE = "hub.token"
DEFAULT_DATA_DIR = Path("./data")
TOKEN_BYTES = 32


class TokenFileError(RuntimeError):
    """The token file cannot be created or read (the message names the file and the fix)."""


def token_path(data_dir: Path | str) -> Path:
    return Path(data_dir) / TOKEN_FILE


def ensure_token(data_dir: Path | str) -> tuple[str, Path, bool]:
    """(token, path, created): the token in ``data_dir``, generated when the file is absent."""
    path = token_path(data_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_token(path), path, False
    except OSError as exc:
        raise TokenFileError(f"cannot create the REST token file {path}: {exc.strerror}") from None
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return token, path, True


def read_token(path: Path) -> str:
    """The token in ``path``; tightens a mode readable by others to 0600 (with a warning)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise TokenFileError(f"cannot read the REST token file {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TokenFileError(f"{path} is not a regular file")
        if mode & 0o077:
            os.fchmod(fd, 0o600)
            log.warning(
                "REST token file was readable by other users; now 0600",
                extra={"path": str(path), "was": oct(mode & 0o777)},
            )
        token = os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if not token:
        raise TokenFileError(f"{path} is empty: delete it and restart the hub to generate one")
    return token


def local_token(url: str, token_file: str | None = None) -> str | None:
    """The token a ``sluice`` command on this machine should send to ``url``, if any.

    ``token_file`` (``--token-file`` / ``SLUICE_REST_TOKEN_FILE``) is read wherever the hub
    is. Otherwise, for a loopback URL only (a token is never sent to another machine unasked),
    ``$SLUICE_DATA_DIR/hub.token`` and then ``./data/hub.token`` (``sluice up``'s default data
    directory) are tried; None when neither exists.
    """
    if token_file:
        return read_token(Path(token_file).expanduser())
    host = urlsplit(url).hostname or ""
    if not is_loopback(host):
        return None
    for data_dir in (os.environ.get("SLUICE_DATA_DIR"), str(DEFAULT_DATA_DIR)):
        if data_dir:
            path = token_path(Path(data_dir).expanduser())
            if path.is_file():
                return read_token(path)
    return None


def with_default_token(worker_config: Any) -> Any:
    """``worker_config`` with the generated token as ``rest.auth.token`` when it has no
    credential of its own and no opt-out; logs where the token is (never the token)."""
    if secret(worker_config, "rest.auth.token") or secret(worker_config, "rest.auth.basic"):
        return worker_config
    opt_out = setting(worker_config, "rest.auth.allow.unauthenticated", "false")
    if str(opt_out).strip().lower() == "true":
        return worker_config  # create_app checks the opt-out (loopback only) and warns
    data_dir = Path(str(setting(worker_config, "data.dir", DEFAULT_DATA_DIR)))
    token, path, created = ensure_token(data_dir)
    log.info(
        "REST API token %s: send it as 'Authorization: Bearer <token>', paste it into the "
        "console's sign-in form; local sluice commands read ./data/hub.token, "
        "$SLUICE_DATA_DIR/hub.token or $SLUICE_REST_TOKEN_FILE",
        "generated" if created else "in use",
        extra={"token_file": str(path.resolve())},
    )
    return worker_config.model_copy(update={"rest_auth_token": token})
