"""Ratings versions (read side; creating and activating them is in :mod:`.admin`)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from ..deps import LedgerDep
from ..responses import VersionList, errors
from ..schemas import json_response

__all__ = ["router"]

router = APIRouter(tags=["versions"])


@router.get("/v1/versions", response_model=VersionList, responses=errors())
def get_versions(ledger: LedgerDep) -> Response:
    """Every ratings version and which one is active."""
    return json_response({"items": [v.to_dict() for v in ledger.versions()]})
