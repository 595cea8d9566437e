"""The gpu-fungibility CrossGuard policy pack.

Run it with ``pulumi preview --policy-pack policies``, or offline over a
preview-shaped plan with ``python -m policy_gate build/<stack>/plan.json``.
The rules live in :mod:`policies.rules` and import without starting anything;
only ``policies/__main__.py`` constructs the ``PolicyPack`` (which serves gRPC
and never returns).
"""
