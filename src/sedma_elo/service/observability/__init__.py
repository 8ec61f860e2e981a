"""What operators need from a running service: request ids, logs and Prometheus metrics.

``install_observability(app, settings)`` adds all of it to an app built by ``create_app``; the
CLI's ``serve`` applies :func:`~.logging.log_config` and logs :func:`~.startup.startup_line`.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from ..api.asgi import DirectRoute
from ..settings import ServiceSettings
from .metrics import count_database_errors
from .metrics import router as metrics_router
from .middleware import Observe

__all__ = ["ObservedDirectRoute", "install_observability"]


class ObservedDirectRoute(DirectRoute):
    """A :class:`DirectRoute` served through :class:`Observe` (labelled with its own path)."""

    def __init__(self, inner: DirectRoute, *, metrics: bool, access_log: bool) -> None:
        super().__init__(inner.method, inner.path, inner.limit, inner.handler)
        self._observed = Observe(super().serve, metrics=metrics, access_log=access_log, route=inner.path)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the route with a request id, metrics and an access-log line."""
        await self._observed(scope, receive, send)


def install_observability(app: FastAPI, settings: ServiceSettings) -> None:
    """Add request ids, metrics, the access log (``settings.access_log``) and the probes to ``app``.

    ``/metrics`` is added as a route (the probes are in :mod:`sedma_elo.service.api.routes.meta`);
    call this after ``app.direct`` (the direct write route, if the app has one) is set, so that it
    is observed too.
    """
    metrics, access_log = settings.metrics, settings.access_log
    app.add_middleware(Observe, metrics=metrics, access_log=access_log)
    direct = getattr(app, "direct", None)
    if isinstance(direct, DirectRoute):
        app.direct = ObservedDirectRoute(direct, metrics=metrics, access_log=access_log)  # type: ignore[attr-defined]
    app.include_router(metrics_router)
    count_database_errors()
