"""The offline plan: run the real program under Pulumi mocks and report what it would build."""
