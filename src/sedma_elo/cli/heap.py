"""The memory of a long bulk command: big buffers given back to the system when freed (glibc);
the compiler's code dropped from the resident set once the kernel is loaded.

glibc serves an allocation above its mmap threshold with its own mapping, returned to the system
on ``free``; but the threshold rises to the size of each such block freed (up to 32 MB), so after
the first chunk ``verify``'s per-chunk buffers (a few MB each: COPY results, numpy arrays) come
from the heap, whose free holes the next chunks' smaller objects pin. Fixing the threshold keeps
every big buffer in its own mapping: ``verify`` of a 500,000-match league on PostgreSQL peaked at
259 MB with the moving threshold and 249 MB with it fixed, in the same minutes (docs/service.md,
"The ledger at scale").

numba's compiler, LLVM (``libllvmlite.so``, 178 MB on disk), runs when the kernel is loaded from
numba's disk cache; its code stays mapped, and with the kernel's read-around about 67 MB of it
stays resident, though ``verify`` runs none of it again. :func:`drop_clean_pages` drops those pages
from this process's resident set: clean pages of the file, shared with every process that maps it
and kept in the page cache; a later call of LLVM reads them back from there (docs/service.md,
"Verify's fixed memory").
"""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

__all__ = ["COMPILER_LIBRARY", "MMAP_THRESHOLD", "drop_clean_pages", "fix_mmap_threshold"]

#: The file name of numba's compiler library (llvmlite's, LLVM linked in).
COMPILER_LIBRARY = "libllvmlite.so"
_MADV_DONTNEED = 4  # madvise's advice number (Linux, asm-generic/mman-common.h)
#: The fields of ``/proc/PID/smaps`` that count a mapping's pages that are not the file's: written
#: (copied on write, resident or swapped out).
_OWN_PAGES = ("Anonymous:", "Private_Dirty:", "Shared_Dirty:", "Swap:")

#: Bytes from which an allocation gets its own mapping: glibc's initial default.
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Set glibc's mmap threshold to ``threshold`` bytes for this process, which also stops it
    from moving; whether it was set (False on a C library without ``mallopt``: nothing changes)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))


def _clean_mappings(smaps: str, library: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each mapping of a file named ``library`` in ``smaps`` (the text of
    ``/proc/PID/smaps``) that is not writable and holds no page of its own (:data:`_OWN_PAGES`
    all 0): every page of it is the file's, as read. A mapping with such a page (relocated data)
    is left out: dropping it would lose what was written there."""
    found: list[list[int]] = []
    current: list[int] | None = None
    for line in smaps.splitlines():
        fields = line.split()
        if not fields:
            continue
        if not fields[0].endswith(":"):  # a mapping's header: range, perms, offset, dev, inode, path
            current = None
            if len(fields) > 5 and Path(fields[5]).name == library and "w" not in fields[1]:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                current = [start, end, 0]
                found.append(current)
        elif current is not None and fields[0] in _OWN_PAGES:
            current[2] += int(fields[1])
    return [(start, end) for start, end, own in found if own == 0]


def drop_clean_pages(library: str = COMPILER_LIBRARY) -> int:
    """Drop from this process's resident set the pages of ``library``'s clean, read-only mappings
    (``madvise(MADV_DONTNEED)``); the bytes of those mappings (0 where ``library`` is not mapped
    or on a system without ``/proc/self/smaps`` or ``madvise``: nothing changes). The pages stay
    in the page cache; what touches them again (another thread too) faults them back in, as read
    from the file."""
    try:
        smaps = Path("/proc/self/smaps").read_text()
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        madvise = libc.madvise
    except (OSError, AttributeError, TypeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    dropped = 0
    for start, end in _clean_mappings(smaps, library):
        if madvise(start, end - start, _MADV_DONTNEED) == 0:
            dropped += end - start
    return dropped
