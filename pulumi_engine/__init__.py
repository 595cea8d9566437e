"""The real Pulumi engine, offline: the CLI and the kubernetes provider built from Go modules, stand-in cloud plugins."""
