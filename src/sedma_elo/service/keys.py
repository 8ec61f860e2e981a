"""The former home of the API keys: ``sedma_elo.service.keys`` imports keep working.

The keys live in :mod:`sedma_elo.service.auth.keys`; new code imports them from there.
"""

from .auth.keys import *  # noqa: F403  # the same names, under the old module path
from .auth.keys import __all__ as __all__
