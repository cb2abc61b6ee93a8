"""Hostile zips for tests, built fast: the same compressed member written under many names."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib


def zip_of_copies(names: list[str], content: bytes) -> bytes:
    """A valid deflated zip whose members (``names``) all hold ``content``; compresses once,
    so 2,040 members of 1 MiB take milliseconds rather than seconds."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = compressor.compress(content) + compressor.flush()
    crc = zlib.crc32(content)
    body = io.BytesIO()
    directory = io.BytesIO()
    for name in names:
        encoded = name.encode()
        offset = body.tell()
        body.write(
            struct.pack(
                "<4s5H3L2H",
                b"PK\x03\x04",
                20,
                0,
                8,
                0,
                0,
                crc,
                len(data),
                len(content),
                len(encoded),
                0,
            )
        )
        body.write(encoded)
        body.write(data)
        directory.write(
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                20,
                0,
                8,
                0,
                0,
                crc,
                len(data),
                len(content),
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
        )
        directory.write(encoded)
    end = struct.pack(
        "<4s4H2LH",
        b"PK\x05\x06",
        0,
        0,
        len(names),
        len(names),
        directory.tell(),
        body.tell(),
        0,
    )
    return body.getvalue() + directory.getvalue() + end


def make_zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def with_declared_size(content: bytes, member: str, declared: int) -> bytes:
    """``content`` (a zip) with ``member``'s uncompressed size in the central directory (and
    local header) replaced by ``declared``: a zip that lies about what it expands to."""
    patched = bytearray(content)
    encoded = member.encode()
    position = patched.find(b"PK\x01\x02")
    while position >= 0:
        name_length = struct.unpack_from("<H", patched, position + 28)[0]
        if bytes(patched[position + 46 : position + 46 + name_length]) == encoded:
            struct.pack_into("<L", patched, position + 24, declared)
            local = struct.unpack_from("<L", patched, position + 42)[0]
            struct.pack_into("<L", patched, local + 22, declared)
        position = patched.find(b"PK\x01\x02", position + 4)
    return bytes(patched)
