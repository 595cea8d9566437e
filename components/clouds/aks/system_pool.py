"""The name the AKS cluster's own system pool takes, apart from the cluster component (which imports the Azure
SDK): the stack's config rules refuse a pool of that name without loading the SDK."""

SYSTEM_POOL = "system"
