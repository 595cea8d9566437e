"""Capacity preflight: ``python -m preflight --stack <stack>`` (``make preflight``), for GKE and EKS stacks."""
