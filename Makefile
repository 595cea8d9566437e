# gpu-fungibility — every target works offline once .venv exists; the first one creates it from the lock.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# uv, pinned in tools/uv-requirements.txt: the one on PATH when it is that version, else the same
# version bootstrapped from PyPI into $(UV_TOOLS) (tools/bootstrap-uv.sh, hash-checked).
UV_TOOLS ?= .venv-tools
UV_VERSION := $(shell sed -n 's/^uv==\([^ ;]*\).*/\1/p' tools/uv-requirements.txt)
UV ?= $(if $(filter $(UV_VERSION),$(word 2,$(shell uv --version 2>/dev/null))),uv,$(UV_TOOLS)/bin/uv)
UV_DEP := $(filter-out uv,$(UV))
# uv installs no bytecode; Python writes it on first import, unless PYTHONDONTWRITEBYTECODE forbids that:
# then every run would compile the SDKs from source again, so the sync compiles them once instead.
UV_BYTECODE := $(if $(PYTHONDONTWRITEBYTECODE),--compile-bytecode)
# Local packages installed editable (without dependencies: the lock has them) after the sync: the component
# library (components/, imported as gpu_fungibility), as another program would install it.
LOCAL_PACKAGES ?= components
# What a user passes (make plan STACK=...) is text: make does not expand it ($(shell ...) stays text) and
# every recipe hands it to the shell single-quoted by q, so STACK='x;{touch,FILE};true' is one argument.
USER_VARS := STACK BASE PLAN POLICY_CONFIG MODE REPLICAS WORKLOAD STOCKOUT RECLAIM DEADLINE SNAPSHOT KUBECONFIG JSON UPGRADE MINOR
kubeconfig_given := $(filter command line,$(origin KUBECONFIG))
$(foreach v,$(USER_VARS),$(if $(filter command line environment,$(origin $(v))),$(eval override $(v) := $$(value $(v)))))
q = '$(subst ','\'',$(1))'
STACK ?= dev
PLAN ?= build/$(STACK)/plan.json

.PHONY: help venv lock lock-check plan diff test lint preview preview-build test-preview up-rehearsal calendar-check policy-check simulate preflight verify rehearse bench bench-setup clean rehearse-build rehearse-compile test-rehearse

help:
	@echo "make plan STACK=dev              offline plan -> build/<stack>/ (plan.json, manifests/, summary.md)"
	@echo "make diff STACK=dev [BASE=ref] [JSON=1]  offline preview diff against a git ref -> build/<stack>/diff.md"
	@echo "make test                        the whole test suite, offline"
	@echo "make rehearse-build [MINOR=1.35]  build Kubernetes' own control plane for the rehearsal (needs Go >= 1.24)"
	@echo "make rehearse-compile            go build + go vet of the rehearsal's control plane for every Kubernetes minor (Go)"
	@echo "make test-rehearse [MINOR=1.35]   the rehearsal's tests on that control plane (tests/rehearsal; needs Go)"
	@echo "make preview STACK=dev [MODE=first|update] [POLICY_CONFIG=f]  the real Pulumi engine previews the stack with the pack (needs Go) -> build/<stack>.engine/"
	@echo "make preview-build                build the Pulumi CLI and kubernetes provider from Go modules (needs Go)"
	@echo "make up-rehearsal STACK=dev       pulumi up by the real engine onto the rehearsal's Kubernetes control plane (needs Go)"
	@echo "make test-preview                 the real engine's tests: plan == engine, the pack under real previews (tests/engine; needs Go)"
	@echo "make policy-check PLAN=file      the policy pack over a preview JSON file [POLICY_CONFIG=file.json]"
	@echo "make simulate STACK=dev [REPLICAS=n] [WORKLOAD=w] [STOCKOUT=pool,...] [RECLAIM=pool,...] [JSON=1]"
	@echo "make preflight STACK=dev [JSON=1] [DEADLINE=120]   capacity and quota preflight (GKE: Google credentials; EKS: AWS)"
	@echo "make verify STACK=dev [SNAPSHOT=file] [KUBECONFIG=file] [JSON=1]  the live cluster against the promises (read-only)"
	@echo "make rehearse STACK=dev [JSON=1]  the plan on Kubernetes' own control plane (needs Go >= 1.24) -> build/<stack>/rehearse.md"
	@echo "make bench                       benchmarks (print figures); fresh-clone setup: make bench-setup"
	@echo "make bench-setup                 fresh clone, cold caches: make plan STACK=dev vs venv + pip install"
	@echo "make lint                        ruff, every stack file gated by the workflows, a calendar review warning, zizmor"
	@echo "make calendar-check              fail when the support calendar is due for review (the scheduled workflow)"
	@echo "make venv                        .venv from the lock requirements.txt with uv (every target does this first)"
	@echo "make lock [UPGRADE=1]            recompile every lock from its source (tools/lock.py); UPGRADE=1 takes newest"
	@echo "make lock-check                  fail when a lock differs from a fresh compile of its source (needs PyPI)"
	@echo "make clean                       remove build/ and .pytest_cache"

$(UV_TOOLS)/bin/uv: tools/uv-requirements.txt
	bash tools/bootstrap-uv.sh $(PYTHON) $(UV_TOOLS) tools/uv-requirements.txt

# The venv holds exactly the lock (hash-checked); the stamp makes every later target instant.
$(VENV)/.installed: requirements.txt components/pyproject.toml $(UV_DEP)
	$(UV) venv --quiet --allow-existing --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')" $(VENV)
	$(UV) pip sync --quiet --require-hashes $(UV_BYTECODE) --python $(PY) requirements.txt
	$(if $(strip $(LOCAL_PACKAGES)),$(UV) pip install --quiet --no-deps --python $(PY) $(addprefix -e ,$(LOCAL_PACKAGES)))
	touch $@

venv: $(VENV)/.installed

lock: $(UV_DEP)
	$(PYTHON) tools/lock.py --uv $(UV) $(if $(UPGRADE),--upgrade)

lock-check: $(UV_DEP)
	$(PYTHON) tools/lock.py --check --uv $(UV)

plan: venv
	$(PY) -m offline_plan --stack $(call q,$(STACK))

diff: venv
	$(PY) -m plan_diff --stack $(call q,$(STACK)) $(if $(BASE),--base $(call q,$(BASE))) $(if $(JSON),--json)

test: venv
	$(PY) -m pytest -q

# The rehearsal's control plane (rehearse/harness, Go), built into .rehearse-cache/bin/ for one Kubernetes minor.
MINOR ?= 1.35
rehearse-build: venv
	$(PY) -m rehearse.control_plane build --minor $(call q,$(MINOR))

# go build + go vet of the harness against every minor of rehearse/harness/versions.json (nothing kept): CI compiles
# every supported minor, though the rehearsal's tests run on one.
rehearse-compile: venv
	$(PY) -m rehearse.control_plane compile

# pyproject's addopts leave tests/rehearsal out of `make test`; here they are the point.
test-rehearse: venv
	REHEARSE_MINOR=$(call q,$(MINOR)) $(PY) -m pytest -q -o addopts="-p no:cacheprovider" tests/rehearsal

# The real Pulumi engine (the CLI and the kubernetes provider built from Go modules into .engine-cache/, stand-in
# cloud plugins): the stack previewed with the policy pack, as `pulumi preview --policy-pack` would, offline.
preview-build: venv
	$(PY) -m pulumi_engine build

preview: venv
	$(PY) -m pulumi_engine preview --stack $(call q,$(STACK)) $(if $(MODE),--mode $(call q,$(MODE))) \
		$(if $(POLICY_CONFIG),--policy-config $(call q,$(POLICY_CONFIG)))

# `pulumi up` by the real engine, the Kubernetes half onto the rehearsal's control plane (needs Go; docs/engine.md).
up-rehearsal: venv
	$(PY) -m pulumi_engine up-rehearsal --stack $(call q,$(STACK)) $(if $(MINOR),--minor $(call q,$(MINOR)))

test-preview: venv
	$(PY) -m pytest -q -o addopts="-p no:cacheprovider" tests/engine

# zizmor, the static analysis of .github/workflows/ (hash-locked in tools/zizmor-requirements.txt), beside the
# bootstrapped uv; --offline: no GitHub API, so a new unpinned action or a medium/high finding fails here and in CI.
ZIZMOR_DIR := $(UV_TOOLS)/zizmor
$(ZIZMOR_DIR)/bin/zizmor: tools/zizmor-requirements.txt $(UV_DEP)
	rm -rf $(ZIZMOR_DIR)
	$(UV) pip install --quiet --require-hashes --no-deps --only-binary=:all: --python $(PYTHON) \
		--target $(ZIZMOR_DIR) -r tools/zizmor-requirements.txt
	touch $@

# tools/stacks_in_ci.py: every Pulumi.<stack>.yaml here is gated by the workflows, or it says what to add where.
lint: venv $(ZIZMOR_DIR)/bin/zizmor
	$(PY) -m ruff check .
	$(PY) -m tools.stacks_in_ci
	$(PY) -m tools.calendar_review
	$(ZIZMOR_DIR)/bin/zizmor --quiet --offline --no-progress --min-severity=medium .github/workflows

# The support calendar's REVIEW_BY passed: a warning in make lint, a failure here (calendar-review.yml, weekly).
calendar-check: venv
	$(PY) -m tools.calendar_review --strict

policy-check: venv
	$(PY) -m policy_gate $(call q,$(PLAN)) $(if $(POLICY_CONFIG),--policy-config $(call q,$(POLICY_CONFIG)))

simulate: venv
	$(PY) -m simulator --stack $(call q,$(STACK)) $(if $(REPLICAS),--replicas $(call q,$(REPLICAS))) \
		$(if $(WORKLOAD),--workload $(call q,$(WORKLOAD))) $(if $(STOCKOUT),--stockout $(call q,$(STOCKOUT))) \
		$(if $(RECLAIM),--reclaim $(call q,$(RECLAIM))) $(if $(JSON),--json)

preflight: venv
	$(PY) -m preflight --stack $(call q,$(STACK)) $(if $(JSON),--json) $(if $(DEADLINE),--deadline $(call q,$(DEADLINE)))

# KUBECONFIG=file on the command line is passed as --kubeconfig; an exported KUBECONFIG (a list, as kubectl
# reads it) is read by verify itself; otherwise verify asks the stack's output (pulumi CLI).
verify: venv
	$(PY) -m verify --stack $(call q,$(STACK)) $(if $(SNAPSHOT),--snapshot $(call q,$(SNAPSHOT))) \
		$(if $(kubeconfig_given),--kubeconfig $(call q,$(KUBECONFIG))) $(if $(JSON),--json)

# Kubernetes' own apiserver, scheduler and controllers (built once with Go) judge the plan and the simulator.
rehearse: venv
	$(PY) -m rehearse --stack $(call q,$(STACK)) $(if $(JSON),--json)

bench: venv
	$(PY) bench/bench_plan.py
	@if [ -f bench/bench_simulator.py ]; then $(PY) bench/bench_simulator.py; fi
	$(PY) bench/bench_diff.py
	$(PY) bench/bench_verify.py
	$(PY) bench/bench_simulator_replicas.py
	$(PY) bench/bench_differential.py --simulator-only

bench-setup: venv
	$(PY) bench/bench_setup.py

clean:
	rm -rf build .pytest_cache
