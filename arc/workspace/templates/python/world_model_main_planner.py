"""Main planner: a plan from a state to LEVEL_COMPLETED, inside the model."""


def planner(state: dict, goal: dict | None = None) -> list[dict] | None:
    """Placeholder planner: no plan."""
    return None
