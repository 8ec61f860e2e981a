"""Generate a typed Python client of the rating service from its OpenAPI schema.

    python scripts/generate-client.py OUT [--url http://127.0.0.1:8000] [--generator PATH]

The client is the package ``sedma_elo_client`` written to ``OUT/sedma_elo_client`` (replaced if
there), made by openapi-python-client (pinned in requirements/codegen.txt; ``make codegen``
installs it in .venv/codegen, where it is looked for first). It needs ``httpx``, ``attrs`` and
``python-dateutil`` at run time.

The schema is the one a running server serves at ``URL/openapi.json`` with ``--url``, else the
one this checkout's app builds (no server or database needed). Any warning of the generator (a
part of the schema it cannot type) fails the run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "sedma_elo_client"
#: Where ``make codegen`` installs the generator.
DEFAULT_GENERATOR = ROOT / ".venv" / "codegen" / "bin" / "openapi-python-client"


def find_generator(given: str | None = None) -> str | None:
    """The generator's executable: ``given``, ``$SEDMA_ELO_CODEGEN``, .venv/codegen's, or on PATH."""
    for candidate in (given, os.environ.get("SEDMA_ELO_CODEGEN"), str(DEFAULT_GENERATOR)):
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("openapi-python-client")


def schema_of(url: str | None) -> dict[str, Any]:
    """The OpenAPI schema served at ``url`` (``/openapi.json`` appended), or this checkout's."""
    if url is not None:
        with urllib.request.urlopen(url.rstrip("/") + "/openapi.json", timeout=30) as answer:
            schema: dict[str, Any] = json.load(answer)
        return schema
    from sedma_elo.service import ServiceSettings, create_app

    return create_app(ServiceSettings()).openapi()


def generate(schema: dict[str, Any], out: Path, generator: str) -> Path:
    """Write the client of ``schema`` to ``out/sedma_elo_client`` and return that directory.

    Raises:
        subprocess.CalledProcessError: the generator failed or warned (its output is attached).
    """
    target = out / PACKAGE
    config = {"package_name_override": PACKAGE, "post_hooks": []}  # no formatting: nobody edits it
    with tempfile.TemporaryDirectory() as work:
        schema_path = Path(work, "openapi.json")
        schema_path.write_text(json.dumps(schema))
        config_path = Path(work, "config.json")
        config_path.write_text(json.dumps(config))
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                generator,
                "generate",
                "--path",
                str(schema_path),
                "--config",
                str(config_path),
                "--meta",
                "none",
                "--output-path",
                str(target),
                "--overwrite",
                "--fail-on-warning",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="directory to write the sedma_elo_client package into")
    parser.add_argument("--url", help="base URL of a running server (default: this checkout's schema)")
    parser.add_argument("--generator", help="openapi-python-client executable (default: .venv/codegen's)")
    args = parser.parse_args(argv)
    generator = find_generator(args.generator)
    if generator is None:
        print("error: openapi-python-client not found: run `make codegen`", file=sys.stderr)
        return 2
    try:
        target = generate(schema_of(args.url), args.out, generator)
    except subprocess.CalledProcessError as exc:
        print(f"error: the generator failed:\n{exc.stdout}{exc.stderr}", file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
