"""``make verify``: hold the live cluster (or a snapshot of it) against the project's promises."""
