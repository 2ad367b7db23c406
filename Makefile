# DGX pod toolkit - entry points. These target names are stable: users and automation call them.
#   make setup                 install everything (Debian packages, .venv, collections)
#   make demo                  setup + sim-up + site.yml + validate.yml on the pod-in-a-box
#   make test                  setup + linters + all tests (unit, integration on the simulator) but the `long` ones
#   make test-long             the `long` tests (second faults of a stage, the simulator's lifecycle, a Slurm job timing out)
#   make sim-up NODES=<n>      build the pod-in-a-box (default 4 DGX nodes, STORAGE=2 storage nodes)
#   make sim-status / sim-down
#   make lint / unit / integration   parts of `make test`
#   make drill [DRILL_ARGS=--only a,b]  the fault drill on a converged pod-in-a-box (root; scripts/drill.py)
#   make bundle [BUNDLE=build/dgxpod-bundle.tar] [BUNDLE_ARGS=--with-image]   an offline install bundle (network here)
#   make setup-offline BUNDLE=<bundle>   install the controller from a bundle, no network (docs/install.md)
SHELL := /bin/bash
NODES ?= 4
STORAGE ?= 2
BUNDLE ?= build/dgxpod-bundle.tar
BUNDLE_ARGS ?=
VENV := $(CURDIR)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
PYTEST := $(VENV)/bin/python -m pytest -p no:cacheprovider --durations=25

.PHONY: setup demo test test-long lint unit integration sim-up sim-status sim-down deploy validate drill bundle \
	setup-offline

setup:
	bash scripts/setup.sh

# an offline install bundle of the controller (scripts/bundle.sh; --with-image adds the simulator's image, root)
bundle: setup
	@mkdir -p $(dir $(BUNDLE))
	bash scripts/bundle.sh $(BUNDLE_ARGS) $(BUNDLE)

setup-offline:
	bash scripts/setup.sh --offline $(BUNDLE)

sim-up: setup
	sim/podsim up --nodes $(NODES) --storage $(STORAGE)

sim-status:
	sim/podsim status

sim-down:
	sim/podsim down

deploy:
	ansible-playbook site.yml

validate:
	ansible-playbook validate.yml

demo: sim-up
	ansible-playbook site.yml
	ansible-playbook validate.yml
	@echo "Results: $(CURDIR)/results/pod-in-a-box/latest/ (report.md, results.json)"

lint: setup
	ruff check .
	yamllint -s .
	ansible-lint --offline -q

unit: setup
	$(PYTEST) -n 2 tests/unit

integration: setup
	$(PYTEST) -m integration tests

# The unit suite on both cores (pytest-xdist), then the simulator tests alone (they share one pod and
# compare measured rates, which other work on the machine would disturb).
test: setup lint
	$(PYTEST) -n 2 -m "not long" tests/unit
	$(PYTEST) -m "not long" tests --ignore=tests/unit

test-long: setup
	$(PYTEST) -m long tests

drill: setup
	$(VENV)/bin/python scripts/drill.py $(DRILL_ARGS)
