"""Where a single-node broker keeps its ACLs: ``acls.json`` in the data dir.

Format: ``{"version": 1, "acls": [AclBinding.to_json(), ...]}``, the whole set rewritten on each
change (ACL changes are rare admin actions; a set of thousands is a few hundred KB). The write
goes to a temporary file that is fsynced and renamed over the old one, so a crash leaves either
the old or the new set, never half of one. A file that cannot be parsed stops the broker from
starting: silently starting with no ACLs could open (or close) everything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from broker.security.acl import AclBinding

FILE_NAME = "acls.json"


class FileAclStore:
    """The ACL set of one broker, persisted in its data dir."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def load(self) -> list[AclBinding]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text())
            return [AclBinding.from_json(item) for item in data["acls"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self.path} is not a valid ACL file: {exc!r}") from exc

    async def apply(
        self, adds: list[AclBinding], removes: list[AclBinding], everything: list[AclBinding]
    ) -> None:
        """Persists a change (the whole set, ``everything``, after it)."""
        self.save(everything)

    def save(self, acls: list[AclBinding]) -> None:
        tmp = self.path.with_suffix(".json.tmp")
        payload = json.dumps({"version": 1, "acls": [acl.to_json() for acl in acls]}, indent=1)
        with open(tmp, "w") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
