"""The C heap of a long bulk command: big buffers given back to the system when freed (glibc).

glibc serves an allocation above its mmap threshold with its own mapping, returned to the system
on ``free``; but the threshold rises to the size of each such block freed (up to 32 MB), so after
the first chunk ``verify``'s per-chunk buffers (a few MB each: COPY results, numpy arrays) come
from the heap, whose free holes the next chunks' smaller objects pin. Fixing the threshold keeps
every big buffer in its own mapping: ``verify`` of a 500,000-match league on PostgreSQL peaked at
259 MB with the moving threshold and 249 MB with it fixed, in the same minutes (docs/service.md,
"The ledger at scale").
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["MMAP_THRESHOLD", "fix_mmap_threshold"]

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
