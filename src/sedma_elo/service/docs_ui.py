"""The API docs pages, ``/docs`` (Swagger UI) and ``/redoc``, served from the package's own files.

FastAPI's default pages load their scripts from a CDN and are blank on a server without internet.
The front ends are vendored under ``service/static/`` (``scripts/vendor-docs-ui.sh`` refreshes
them; ``static/VERSIONS.md`` names versions and licences) and served by :data:`router` under
``/docs/assets/``. Create the app with ``docs_url=None, redoc_url=None`` and include the router.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response

__all__ = ["ASSETS_PATH", "router"]

#: Where the vendored files are served.
ASSETS_PATH = "/docs/assets"

#: The only files served, with their media types (anything else is a 404).
_ASSETS = {
    "swagger-ui/swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui/swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui/favicon-32x32.png": "image/png",
    "redoc/redoc.standalone.js": "text/javascript; charset=utf-8",
}

#: Swagger UI options: no call to the public validator service (its badge fetches an image from it).
_SWAGGER_PARAMETERS = {"validatorUrl": None}

router = APIRouter(include_in_schema=False)


@cache
def _asset(name: str) -> bytes:
    return resources.files("sedma_elo.service").joinpath("static", name).read_bytes()


def _openapi_url(request: Request) -> str:
    root: str = request.scope.get("root_path", "")
    url: str | None = request.app.openapi_url
    return root + (url or "/openapi.json")


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI for ``/openapi.json``, with scripts and styles from :data:`ASSETS_PATH`."""
    root = request.scope.get("root_path", "") + ASSETS_PATH
    return get_swagger_ui_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=f"{root}/swagger-ui/swagger-ui-bundle.js",
        swagger_css_url=f"{root}/swagger-ui/swagger-ui.css",
        swagger_favicon_url=f"{root}/swagger-ui/favicon-32x32.png",
        oauth2_redirect_url=request.scope.get("root_path", "") + "/docs/oauth2-redirect",
        swagger_ui_parameters=_SWAGGER_PARAMETERS,
    )


@router.get("/docs/oauth2-redirect")
def swagger_ui_redirect() -> HTMLResponse:
    """The page Swagger UI's OAuth2 flow returns to (plain HTML, no external resources)."""
    return get_swagger_ui_oauth2_redirect_html()


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    """ReDoc for ``/openapi.json``; no web fonts (they would come from a font CDN)."""
    root = request.scope.get("root_path", "") + ASSETS_PATH
    return get_redoc_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{root}/redoc/redoc.standalone.js",
        redoc_favicon_url=f"{root}/swagger-ui/favicon-32x32.png",
        with_google_fonts=False,
    )


@router.get(ASSETS_PATH + "/{folder}/{name}")
def asset(folder: str, name: str) -> Response:
    """One vendored file (cached by browsers for a day: a new version has new content, same name)."""
    key = f"{folder}/{name}"
    media_type = _ASSETS.get(key)
    if media_type is None:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(_asset(key), media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})
