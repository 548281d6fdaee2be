"""The audit's checks: one module per family, pure functions over what the stores return."""
