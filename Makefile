# dutil: `make dev` runs the whole platform locally; `make test` runs every test.
SHELL := /bin/bash
export DUTIL_CACHE ?= $(HOME)/.cache/dutil
export npm_config_update_notifier := false

.PHONY: dev test test-unit test-integration deps binaries build generate typecheck bench clean

dev: deps binaries build
	node dist/test/platform/dev.js

test: deps binaries build
	@rm -f .test-results.json; rc=0; \
	npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results.json || rc=$$?; \
	node test/print-summary.mjs .test-results.json; exit $$rc

test-unit: deps build
	npx vitest run --project unit

test-integration: deps binaries build
	npx vitest run --project integration

deps:
	@test/platform/install-deps.sh

# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and MinIO, built from
# the Go module proxy into $(DUTIL_CACHE)/bin (outside git) and reused while versions hold.
binaries:
	@test/platform/build-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio

build:
	@rm -rf dist
	@npm run --silent build

generate:
	npx tsx contract/generate.ts

typecheck:
	npm run --silent typecheck

bench: deps binaries build
	node dist/test/bench/split-latency.js
	node dist/test/bench/gateway-latency.js

clean:
	rm -rf dist .test
