"""The name the EKS cluster's own CPU node group takes, apart from the cluster component (which imports the AWS
SDK): the stack's config rules refuse a pool of that name without loading the SDK."""

SYSTEM_NODE_GROUP = "system"
