"""Lights: no planner yet (the seed's stub)."""

from __future__ import annotations


def planner(state: dict) -> list[dict] | None:
    return None
