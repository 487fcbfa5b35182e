"""arena_mode (being written)."""

from fastapi import APIRouter

router = APIRouter()
