"""``column.mask.hash.*``: Debezium's salted hashes of column values, byte for byte.

Debezium feeds ``MessageDigest`` the salt's bytes, then the value's bytes, and writes the
digest as lowercase hex. The value's bytes depend on the hashing strategy:

* **v1** (``column.mask.hash.<alg>.with.salt.<salt>``): Java serialization of the String
  (``ObjectOutputStream.writeObject``): stream header ``AC ED 00 05``, then ``TC_STRING`` (0x74)
  and a 2-byte length for up to 65535 bytes, or ``TC_LONGSTRING`` (0x7C) and an 8-byte length,
  followed by the text in Java's *modified* UTF-8 (NUL as ``C0 80``, characters beyond the BMP
  as two 3-byte surrogates);
* **v2** (``column.mask.hash.v2.<alg>.with.salt.<salt>``): the text's bytes (UTF-8).

Debezium's own test vectors (salt ``salt``, SHA-256 of ``hello``: v1 ``af5843a0…``, v2
``cd31b3b9…``) are checked in the tests, and a run of the JDK's own ``ObjectOutputStream`` and
``MessageDigest`` cross-checks other inputs. Algorithm names are Java's (``SHA-256``, ``MD5``,
case-insensitive, with the JDK's aliases); ones Python's ``hashlib`` lacks (``MD2``) are config
errors.
"""

from __future__ import annotations

import hashlib
import struct

# Java Security standard names (and the SUN provider's aliases) -> hashlib names.
_ALGORITHMS = {
    "md5": "md5",
    "sha": "sha1", "sha1": "sha1", "sha-1": "sha1",
    "sha-224": "sha224", "sha224": "sha224",
    "sha-256": "sha256", "sha256": "sha256",
    "sha-384": "sha384", "sha384": "sha384",
    "sha-512": "sha512", "sha512": "sha512",
    "sha-512/224": "sha512_224", "sha512/224": "sha512_224",
    "sha-512/256": "sha512_256", "sha512/256": "sha512_256",
    "sha3-224": "sha3_224", "sha3-256": "sha3_256", "sha3-384": "sha3_384",
    "sha3-512": "sha3_512",
}  # fmt: skip

_STREAM_HEADER = b"\xac\xed\x00\x05"


def hashlib_name(java_name: str) -> str:
    """The hashlib name of a Java MessageDigest algorithm; ValueError when unsupported."""
    name = _ALGORITHMS.get(java_name.strip().lower())
    if name is None or name not in hashlib.algorithms_available:
        known = "MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-*"
        raise ValueError(f"hash algorithm {java_name!r} is not supported; use one of {known}")
    return name


def modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8 (DataOutput.writeUTF's body)."""
    out = bytearray()
    for char in text:
        code = ord(char)
        if 0 < code < 0x80:
            out.append(code)
        elif code < 0x800:  # NUL lands here: C0 80
            out += bytes((0xC0 | (code >> 6), 0x80 | (code & 0x3F)))
        elif code < 0x10000:
            out += _three(code)
        else:  # a surrogate pair, each half as three bytes
            code -= 0x10000
            out += _three(0xD800 | (code >> 10)) + _three(0xDC00 | (code & 0x3FF))
    return bytes(out)


def _three(code: int) -> bytes:
    return bytes((0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F)))


def java_serialized_string(text: str) -> bytes:
    """``ObjectOutputStream.writeObject(text)``'s bytes."""
    body = modified_utf8(text)
    if len(body) <= 0xFFFF:
        return _STREAM_HEADER + b"\x74" + struct.pack(">H", len(body)) + body
    return _STREAM_HEADER + b"\x7c" + struct.pack(">q", len(body)) + body


def salted_hex(algorithm: str, salt: bytes, text: str, v2: bool) -> str:
    """Debezium's masked value of ``text`` (``algorithm`` is a hashlib name)."""
    digest = hashlib.new(algorithm)
    digest.update(salt)
    digest.update(text.encode() if v2 else java_serialized_string(text))
    return digest.hexdigest()
