# SensorDigest developer commands. `make demo` and `make test` do all set-up they need.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
TOOLS := .cache/node
CHECKOV := .cache/checkov
STACK ?= SensorDigest
NODE22 := node@22.23.3
CDK_CLI := aws-cdk@2.1148.1
export PATH := $(CURDIR)/$(TOOLS)/node_modules/.bin:$(PATH)
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
# DynamoDB Local lives in the checkout's .cache for every make target (tests, demo, bench).
export DYNAMODB_LOCAL_DIR := $(CURDIR)/.cache/dynamodb-local
# Bytecode is written as each module is first imported (the installs below pass --no-compile). A
# shell that sets PYTHONDONTWRITEBYTECODE, as many CI images do, would have every process the suite
# starts compile again what it imports: aws-cdk-lib alone takes 4.9 s to import uncompiled, 1.2 s
# compiled, once per `cdk synth`.
unexport PYTHONDONTWRITEBYTECODE

# The Lambda runtime's Python (infra/sensor_digest_cdk/lambda_function.py RUNTIME), for
# `make test-unit-py313`: pyenv's 3.13.0 by default, or any 3.13 interpreter given as
# `make test-unit-py313 PY313=/path/to/python3.13`.
PY313 ?= $(shell pyenv prefix 3.13.0 2>/dev/null)/bin/python
# The suite runs in this many pytest-xdist workers (each a process with its own DynamoDB Local):
# one per core of the 2-core machine CI runs on; `make test WORKERS=0` runs it in this one process.
WORKERS ?= 2
PYTEST_WORKERS := -n $(WORKERS) --dist worksteal
VENV313 ?= .venv-py313

.PHONY: setup demo demo-import test test-unit test-unit-py313 lint generated docs docs-serve synth bootstrap deploy destroy bench bench-quick clean

# --no-compile: Python compiles a module when it is first imported; compiling every installed
# module up front (botocore's, moto's, aws-cdk-lib's) took 40 of an install's 57 seconds.
$(VENV)/.installed: requirements.txt requirements-cli.txt requirements-dev.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# AWS's DynamoDBLocal.jar from the npm package amplify-dynamodb-simulator (the tarball alone).
.cache/dynamodb-local/DynamoDBLocal.jar: $(VENV)/.installed
	$(PY) -m sensor_digest_tools.aws.dynamodb_local
	touch $@

# Checkov pins its own dependencies (boto3 among them), so it gets a virtualenv of its own.
$(CHECKOV)/.installed: requirements-scan.txt
	python3 -m venv $(CHECKOV)
	$(CHECKOV)/bin/python -m pip install --quiet --upgrade pip
	$(CHECKOV)/bin/python -m pip install --quiet --no-compile -r requirements-scan.txt
	touch $@

$(TOOLS)/.installed:
	npm install --silent --no-audit --no-fund --prefix $(TOOLS) $(NODE22) $(CDK_CLI)
	touch $@

## setup: virtualenv with pinned requirements, DynamoDB Local, Node 22 and the CDK CLI (ignored folders)
setup: $(VENV)/.installed .cache/dynamodb-local/DynamoDBLocal.jar $(TOOLS)/.installed

## demo: the whole pipeline on this machine against DynamoDB Local (the main command)
demo: setup
	$(VENV)/bin/sensor-digest demo

## demo-import: a generated history file imported into a fresh local pipeline, checked against its truth (docs/import.md)
demo-import: setup
	$(VENV)/bin/sensor-digest import-demo

## test: every tier: unit, moto, DynamoDB Local, the template (cdk-nag, cfn-lint), the repository;
## the read API page's browser tests need Debian's chromium (apt-get install -y chromium); it lists
## its 30 slowest tests at the end
test: setup
	$(PY) -m pytest $(PYTEST_WORKERS) --durations=30

## test-unit: the fast tier, no Java: tests/unit, both handlers end to end on moto (tests/moto) and docs/examples
test-unit: $(VENV)/.installed
	$(PY) -m pytest $(PYTEST_WORKERS) tests/unit tests/moto docs/examples

# A virtualenv of its own on Python 3.13, with the same pinned requirements.
$(VENV313)/.installed: requirements.txt requirements-cli.txt requirements-dev.txt pyproject.toml
	@if ! "$(PY313)" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then \
		echo "test-unit-py313: no Python 3.13 at '$(PY313)' (pyenv install 3.13.0, or make test-unit-py313 PY313=/path/to/python3.13)" >&2; \
		exit 1; \
	fi
	"$(PY313)" -m venv $(VENV313)
	$(VENV313)/bin/python -m pip install --quiet --upgrade pip
	$(VENV313)/bin/python -m pip install --quiet --no-compile -r requirements-dev.txt
	$(VENV313)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

## test-unit-py313: the fast tier on Python 3.13, the functions' Lambda runtime (its own virtualenv, .venv-py313)
test-unit-py313: $(VENV313)/.installed
	$(VENV313)/bin/python -m pytest $(PYTEST_WORKERS) tests/unit tests/moto docs/examples

## lint: ruff (lint and format check), mypy, the docs site's strict build, and Checkov on the synthesized templates of both queue types and of the history import (.checkov.yaml)
lint: setup $(CHECKOV)/.installed docs
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk synth --quiet
	$(CHECKOV)/bin/checkov --config-file .checkov.yaml -f cdk.out/$(STACK).template.json
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk synth --quiet -c queueType=fifo --output cdk.out.fifo
	$(CHECKOV)/bin/checkov --config-file .checkov.yaml -f cdk.out.fifo/$(STACK).template.json
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk synth --quiet -c importEnabled=true --output cdk.out.import
	$(CHECKOV)/bin/checkov --config-file .checkov.yaml -f cdk.out.import/$(STACK).template.json

## generated: the files written from the tunables (infra/sensor_digest_cdk/tunables.py): the construct's
## PipelineProps (props.py) and the options table of docs/configuration.md; tests/repository/test_generated.py fails when either is stale
generated: $(VENV)/.installed
	$(PY) -m sensor_digest_cdk.props_writer --write
	$(PY) -m docs_hooks.context_options --write

## docs: the documentation site from docs/ into site/ (ignored), strict: a broken link or a page left out fails it
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict 2>&1 | { grep -v '^INFO' || true; }; test "$${PIPESTATUS[0]}" -eq 0

## docs-serve: the site at http://127.0.0.1:8000, rebuilt on every change (DOCS_ADDR=host:port to move it)
DOCS_ADDR ?= 127.0.0.1:8000
docs-serve: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr $(DOCS_ADDR)

# CONTEXT: context options for synth, bootstrap, deploy and destroy, key=value separated by spaces
# (docs/configuration.md): `make deploy CONTEXT="queueType=fifo alarmEmail=me@example.com"` runs
# `cdk deploy -c 'queueType=fifo' -c 'alarmEmail=me@example.com' SensorDigest`. They act on the stack
# CONTEXT names with stackName=, else on cdk.json's (SensorDigest). Nothing is remembered between runs:
# give every deploy of a stack the same CONTEXT.
CONTEXT ?=
# each option single-quoted for the shell, a quote inside it escaped ('\''), and read with
# $(value ...) so make expands nothing in it ($ and $(...) stay text): every value reaches the
# app's checks as given (a quote in iotTopic is refused there, not eaten here)
shell_quote = '$(subst ','\'',$(1))'
CDK_CONTEXT = $(foreach option,$(filter-out -c,$(value CONTEXT)),-c $(call shell_quote,$(option)))
CDK_JSON_STACK = $(shell python3 -c 'import json; print(json.load(open("cdk.json"))["context"].get("stackName", ""))' 2>/dev/null)
CONTEXT_STACK = $(or $(patsubst stackName=%,%,$(lastword $(filter stackName=%,$(value CONTEXT)))),$(CDK_JSON_STACK),$(STACK))

## synth: the CloudFormation template into cdk.out/ (no credentials, no Docker, no network); CONTEXT="key=value ..."
synth: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk synth --quiet $(CDK_CONTEXT)

## bootstrap: once per account and region, CDK's own stack (CDKToolkit) where your AWS credentials point
bootstrap: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk bootstrap $(CDK_CONTEXT)

## deploy: the stack, to the account and region of your AWS credentials; CONTEXT="key=value ..."
deploy: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk deploy $(CDK_CONTEXT) $(call shell_quote,$(CONTEXT_STACK))

## destroy: the stack CONTEXT names (asks first); with removal=retain its tables, queues, logs and key stay
destroy: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cdk destroy $(CDK_CONTEXT) $(call shell_quote,$(CONTEXT_STACK))

## bench: the full benchmark (writes docs/benchmark-results.md and the sweep's docs/batching.svg); bench-quick: a smoke run of it (500 messages a workload)
bench: setup
	$(PY) -m bench

bench-quick: setup
	$(PY) -m bench --quick

clean:
	rm -rf $(VENV) $(VENV313) .cache cdk.out cdk.out.fifo site
