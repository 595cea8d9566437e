"""The rehearsal: a stack's plan applied to Kubernetes' own control plane (apiserver, scheduler, controllers).

The Go program in ``rehearse/harness`` runs the real control plane; this package builds the cluster a stack
would have (nodes, ResourceSlices, the charts' plugin DaemonSets), applies the plan, and compares what the real
scheduler and controllers decide with the project's own models.
"""
