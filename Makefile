# gpu-fungibility — every target works offline; the first one creates .venv.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev
REPLICAS ?= 3
PLAN ?= build/$(STACK)/plan.json

.PHONY: help venv plan test lint policy-check simulate preflight bench clean

help:
	@echo "make plan STACK=dev              offline plan -> build/<stack>/ (plan.json, manifests/, summary.md)"
	@echo "make test                        the whole test suite, offline"
	@echo "make policy-check PLAN=file      the policy pack over a preview JSON file [POLICY_CONFIG=file.json]"
	@echo "make simulate STACK=dev REPLICAS=3 [WORKLOAD=w] [STOCKOUT=pool,...] [JSON=1]"
	@echo "make preflight STACK=eks-dev     EC2 capacity preflight (needs AWS credentials)"
	@echo "make bench                       benchmarks (print figures)"
	@echo "make lint                        ruff"
	@echo "make venv                        create .venv from requirements.txt (every target does this first)"
	@echo "make clean                       remove build/ and .pytest_cache"

$(VENV)/.installed: requirements.txt components/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# The component library (components/), importable as gpu_fungibility, as another program would install it.
	$(PY) -m pip install --quiet --no-deps -e components
	touch $@

venv: $(VENV)/.installed

plan: venv
	$(PY) -m offline_plan --stack $(STACK)

test: venv
	$(PY) -m pytest -q

lint: venv
	$(PY) -m ruff check .

policy-check: venv
	$(PY) -m policy_gate $(PLAN) $(if $(POLICY_CONFIG),--policy-config $(POLICY_CONFIG))

simulate: venv
	$(PY) -m simulator --stack $(STACK) --replicas $(REPLICAS) \
		$(if $(WORKLOAD),--workload $(WORKLOAD)) $(if $(STOCKOUT),--stockout $(STOCKOUT)) $(if $(JSON),--json)

preflight: venv
	$(PY) -m preflight --stack $(STACK)

bench: venv
	$(PY) bench/bench_plan.py
	@if [ -f bench/bench_simulator.py ]; then $(PY) bench/bench_simulator.py; fi

clean:
	rm -rf build .pytest_cache
