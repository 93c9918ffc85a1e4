"""Interview drills: the cards (TOML files in cards/) and a learner's spaced-repetition progress (SQLite)."""
