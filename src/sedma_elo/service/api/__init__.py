"""The HTTP API's parts: one router per area (``routes``), typed dependencies (``deps``), the one
error-to-status mapping (``errors``), request bodies (``schemas``) and plain ASGI pieces (``asgi``).

:func:`sedma_elo.service.app.create_app` assembles them into the application.
"""
