"""The three game statuses a world model's engine returns (baseline1's
game_status module; evident's adapter serves the same names to model code)."""

RUNNING = "RUNNING"
LEVEL_COMPLETED = "LEVEL_COMPLETED"
GAME_OVER = "GAME_OVER"
