"""Reading the members of an uploaded zip within limits that hold however it is built.

A zip is checked three times, each time against every limit, and refused with a problem that
names the archive (or the member) and the limit:

1. before it is opened, from its end-of-central-directory record: the number of entries it
   declares (so a zip of a million empty entries costs nothing to refuse);
2. from its central directory, before any member is decompressed: member count, unsafe paths,
   the declared uncompressed total, the ratio of that total to the archive's own size (which
   catches many small members, and overlapping members, as surely as one big one), and each
   member's own compression ratio;
3. while each member is decompressed, in chunks: the bytes actually produced, against the
   remaining total budget and the member's ratio, stopping at the limit (declared sizes are
   never trusted alone).

Nothing is written to disk; members are returned in memory.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePosixPath

from recommender.corpus import InputError, Problem
from recommender.io._common import ProblemLog

# Defaults for files a user reads from their own disk (the service passes tighter ones).
MAX_ZIP_MEMBERS = 200_000
MAX_ZIP_UNCOMPRESSED_BYTES = 2 * 1024**3
MAX_ZIP_COMPRESSION_RATIO = 100

# Members smaller than this are not judged by their own ratio (a 2 KiB file of repeated
# keys may compress 150x); the archive-wide ratio and the byte budget still count them.
_RATIO_FLOOR_BYTES = 64 * 1024
_CHUNK_BYTES = 1024 * 1024
_EOCD = struct.Struct("<4s4H2LH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_ZIP64_EOCD_SIGNATURE = b"PK\x06\x06"


@dataclass(frozen=True)
class ArchiveLimits:
    """What one zip may expand to: ``max_members`` entries (files, folders excluded),
    ``max_uncompressed_bytes`` in all of the members read, and at most
    ``max_compression_ratio`` times the archive's size (in all) or a member's compressed
    size (each)."""

    max_members: int = MAX_ZIP_MEMBERS
    max_uncompressed_bytes: int = MAX_ZIP_UNCOMPRESSED_BYTES
    max_compression_ratio: float = MAX_ZIP_COMPRESSION_RATIO

    def __post_init__(self) -> None:
        if self.max_members < 1 or self.max_uncompressed_bytes < 1:
            raise ValueError("archive limits must be positive")
        if self.max_compression_ratio < 1:
            raise ValueError("max_compression_ratio must be at least 1")


@dataclass(frozen=True)
class ZipMember:
    """A member read from a zip: ``where`` (``archive.zip:path/in/zip``, for messages), its
    base name and its bytes."""

    where: str
    base_name: str
    content: bytes


def declared_entries(content: bytes) -> int | None:
    """Entries a zip declares in its end-of-central-directory record (zip64 aware), or
    ``None`` when the record cannot be found (zipfile then reports the zip as unreadable)."""
    tail_start = max(0, len(content) - (_EOCD.size + 65535))
    position = content.rfind(_EOCD_SIGNATURE, tail_start)
    if position < 0 or position + _EOCD.size > len(content):
        return None
    entries = _EOCD.unpack_from(content, position)[4]
    locator_at = position - _ZIP64_LOCATOR.size
    if entries == 0xFFFF and locator_at >= 0:
        signature, _disk, zip64_at, _disks = _ZIP64_LOCATOR.unpack_from(content, locator_at)
        if (
            signature == _ZIP64_LOCATOR_SIGNATURE
            and zip64_at + _ZIP64_EOCD.size <= len(content)
            and content[zip64_at : zip64_at + 4] == _ZIP64_EOCD_SIGNATURE
        ):
            entries = _ZIP64_EOCD.unpack_from(content, zip64_at)[7]
    return int(entries)


def read_zip_members(
    name: str,
    content: bytes,
    *,
    wanted: Callable[[str], bool],
    limits: ArchiveLimits | None = None,
) -> list[ZipMember]:
    """The members of the zip ``content`` whose base name ``wanted`` accepts (others, and
    dot-files and ``__MACOSX`` entries, are skipped unread), within ``limits``; possibly none.

    Raises one :class:`~recommender.corpus.InputError` listing every problem: unreadable zip,
    too many members, unsafe paths (absolute, ``..``, drive letters), too many bytes, too
    high a compression ratio, unreadable members.
    """
    limits = limits or ArchiveLimits()
    log = ProblemLog()
    declared = declared_entries(content)
    if declared is not None and declared > limits.max_members:
        log.add(
            name,
            None,
            None,
            f"zip declares {declared} entries; at most {limits.max_members} members allowed",
        )
        log.raise_if_any()
    try:
        archive = zipfile.ZipFile(BytesIO(content))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise InputError(
            [Problem(name, None, None, f"not a readable zip file: {error}")]
        ) from error
    with archive:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        if len(infos) > limits.max_members:
            log.add(
                name,
                None,
                None,
                f"zip has {len(infos)} members; at most {limits.max_members} allowed",
            )
            log.raise_if_any()
        selected = _select(name, infos, wanted, limits, len(content), log)
        log.raise_if_any()
        members = _decompress(name, archive, selected, limits, log)
        log.raise_if_any()
    return members


def _select(
    name: str,
    infos: list[zipfile.ZipInfo],
    wanted: Callable[[str], bool],
    limits: ArchiveLimits,
    archive_bytes: int,
    log: ProblemLog,
) -> list[tuple[str, str, zipfile.ZipInfo]]:
    """Members to read, after the checks on declared sizes (archive-wide problems are
    listed first: they matter most when thousands of members are each a problem)."""
    selected: list[tuple[str, str, zipfile.ZipInfo]] = []
    member_problems: list[tuple[str, str]] = []
    declared_total = 0
    ratio = limits.max_compression_ratio
    for info in infos:
        member = info.filename.replace("\\", "/")
        parts = PurePosixPath(member).parts
        where = f"{name}:{member}"
        if member.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
            member_problems.append((where, "unsafe path in zip (absolute or with '..'); rejected"))
            continue
        base = parts[-1] if parts else ""
        if base.startswith(".") or "__MACOSX" in parts or not wanted(base):
            continue
        declared_total += info.file_size
        if info.file_size > _RATIO_FLOOR_BYTES and info.file_size > ratio * max(
            info.compress_size, 1
        ):
            member_problems.append(
                (
                    where,
                    f"member expands {info.file_size / max(info.compress_size, 1):.0f} times "
                    f"(at most {ratio:g} allowed; zip bomb?)",
                )
            )
        selected.append((where, base, info))
    if declared_total > limits.max_uncompressed_bytes:
        log.add(
            name,
            None,
            None,
            f"zip expands to {declared_total} bytes; at most {limits.max_uncompressed_bytes} "
            "allowed",
        )
    elif declared_total > _RATIO_FLOOR_BYTES and declared_total > ratio * max(archive_bytes, 1):
        log.add(
            name,
            None,
            None,
            f"zip of {archive_bytes} bytes expands to {declared_total} bytes, "
            f"{declared_total / max(archive_bytes, 1):.0f} times its size (at most {ratio:g} "
            "allowed; zip bomb?)",
        )
    for where, message in member_problems:
        log.add(where, None, None, message)
    return selected


def _decompress(
    name: str,
    archive: zipfile.ZipFile,
    selected: list[tuple[str, str, zipfile.ZipInfo]],
    limits: ArchiveLimits,
    log: ProblemLog,
) -> list[ZipMember]:
    """Decompress in chunks, counting the bytes actually produced against every limit."""
    members: list[ZipMember] = []
    remaining = limits.max_uncompressed_bytes
    ratio = limits.max_compression_ratio
    for where, base, info in selected:
        chunks: list[bytes] = []
        produced = 0
        member_limit = max(_RATIO_FLOOR_BYTES, int(ratio * max(info.compress_size, 1)))
        try:
            with archive.open(info) as handle:
                while chunk := handle.read(_CHUNK_BYTES):
                    produced += len(chunk)
                    if produced > remaining:
                        log.add(
                            where,
                            None,
                            None,
                            f"zip expands past {limits.max_uncompressed_bytes} bytes (the "
                            "limit) while reading this member",
                        )
                        return members
                    if produced > member_limit:
                        log.add(
                            where,
                            None,
                            None,
                            f"member expands more than {ratio:g} times its compressed size "
                            "(zip bomb?)",
                        )
                        return members
                    chunks.append(chunk)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as error:
            log.add(where, None, None, f"cannot read zip member: {error}")
            continue
        remaining -= produced
        members.append(ZipMember(where, base, b"".join(chunks)))
    return members
