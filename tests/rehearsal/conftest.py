"""Tests that run Kubernetes' own control plane (the Go harness): `make test-rehearse`, never `make test`.

Without Go they skip on a workstation; under CI=true a missing toolchain or a failed build fails them.
"""
