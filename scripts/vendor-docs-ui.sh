#!/usr/bin/env bash
# Refresh the vendored API-docs front ends (Swagger UI and ReDoc) under src/sedma_elo/service/static/
# from the npm registry, so /docs and /redoc work on a server without internet.
#
#   scripts/vendor-docs-ui.sh [SWAGGER_UI_VERSION] [REDOC_VERSION]
#
# Defaults are the versions vendored now (see static/VERSIONS.md). ReDoc stays on 2.x: FastAPI's
# get_redoc_html writes the <redoc spec-url> element of ReDoc 2. Needs npm (Debian: apt-get install npm).
set -euo pipefail
SWAGGER_UI_VERSION="${1:-5.35.0}"
REDOC_VERSION="${2:-2.5.4}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/src/sedma_elo/service/static"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

cd "$TMP"
npm pack --silent "swagger-ui-dist@$SWAGGER_UI_VERSION" "redoc@$REDOC_VERSION" >/dev/null
mkdir swagger redoc
tar xzf "swagger-ui-dist-$SWAGGER_UI_VERSION.tgz" -C swagger --strip-components=1
tar xzf "redoc-$REDOC_VERSION.tgz" -C redoc --strip-components=1
swagger_licence="$(node -p "require('./swagger/package.json').license")"
redoc_licence="$(node -p "require('./redoc/package.json').license")"
# Only licences that allow redistribution with a notice are vendored; anything else needs a look first.
case "$swagger_licence" in Apache-2.0) ;; *) echo "swagger-ui-dist licence is $swagger_licence" >&2; exit 1 ;; esac
case "$redoc_licence" in MIT) ;; *) echo "redoc licence is $redoc_licence" >&2; exit 1 ;; esac

rm -rf "$DEST/swagger-ui" "$DEST/redoc"
mkdir -p "$DEST/swagger-ui" "$DEST/redoc"
cp swagger/swagger-ui-bundle.js swagger/swagger-ui.css swagger/favicon-32x32.png \
   swagger/LICENSE swagger/NOTICE swagger/swagger-ui-bundle.js.LICENSE.txt "$DEST/swagger-ui/"
cp redoc/bundles/redoc.standalone.js redoc/bundles/redoc.standalone.js.LICENSE.txt redoc/LICENSE "$DEST/redoc/"
# The bundles end with a source-map comment; the maps are not vendored, so drop the dangling reference
# (a browser's dev tools would otherwise ask the server for a missing file).
sed -i -e '/^\/\/# sourceMappingURL=/d' "$DEST/swagger-ui/swagger-ui-bundle.js" "$DEST/redoc/redoc.standalone.js"
sed -i -e 's#/\*\# sourceMappingURL=[^*]*\*/##' "$DEST/swagger-ui/swagger-ui.css"
# ReDoc's sidebar footer shows a logo from the vendor's CDN, with no option to turn it off: point it
# at an empty inline SVG so that the page fetches nothing from elsewhere (the footer's link stays).
REDOC_LOGO='https://cdn.redoc.ly/redoc/logo-mini.svg'
grep -q "$REDOC_LOGO" "$DEST/redoc/redoc.standalone.js" || { echo "ReDoc's logo URL moved: check the patch" >&2; exit 1; }
sed -i -e "s#$REDOC_LOGO#data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E#" "$DEST/redoc/redoc.standalone.js"
if grep -o 'src:"https\?://[^"]*"' "$DEST/redoc/redoc.standalone.js" "$DEST/swagger-ui/swagger-ui-bundle.js"; then
    echo "a bundle loads an image from elsewhere: patch it like the ReDoc logo" >&2; exit 1
fi

cat > "$DEST/VERSIONS.md" <<NOTE
# Vendored front ends for the API docs

Refreshed by \`scripts/vendor-docs-ui.sh\` from the npm registry; served by
\`sedma_elo.service.docs_ui\` at \`/docs\` and \`/redoc\` so that nothing is loaded from a CDN.
Source-map comments are removed (the maps are not shipped), and ReDoc's sidebar logo, which it
loads from its vendor's CDN, is replaced by an empty inline SVG; the files are otherwise unchanged.

| package | version | licence | files |
| --- | --- | --- | --- |
| swagger-ui-dist | $SWAGGER_UI_VERSION | $swagger_licence (swagger-ui/LICENSE, swagger-ui/NOTICE) | swagger-ui/swagger-ui-bundle.js, swagger-ui.css, favicon-32x32.png |
| redoc | $REDOC_VERSION | $redoc_licence (redoc/LICENSE) | redoc/redoc.standalone.js |

The third-party notices bundled into each file are in \`*.js.LICENSE.txt\` beside it.
NOTE
echo "vendored swagger-ui-dist $SWAGGER_UI_VERSION and redoc $REDOC_VERSION into $DEST"
