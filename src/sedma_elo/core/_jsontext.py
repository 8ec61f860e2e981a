"""JSON text of single values, exactly as ``json.dumps(value, ensure_ascii=False)`` writes them.

For JSON built piece by piece on hot paths (the service's stored answers): formatting a known
scalar directly costs a fraction of a ``json.dumps`` call, and the text is the same byte for byte.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring

__all__ = ["json_scalar", "json_string"]

#: A str as a JSON string (quotes, escapes, non-ASCII kept): the encoder json.dumps itself uses.
json_string = encode_basestring


def json_scalar(value: float | str | None) -> str:
    """``value`` (a number, a string or None) as ``json.dumps(value, ensure_ascii=False)`` writes it."""
    # Exact ints and finite floats are their repr, as in json.dumps; NaN, the infinities, bools
    # and subclasses (whose repr may differ) are left to json.dumps itself.
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return repr(value)
    if type(value) is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)
