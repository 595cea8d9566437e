"""EC2 capacity preflight for EKS stacks: ``python -m preflight --stack eks-dev`` (``make preflight``)."""
