# dutil: `make dev` runs the whole platform locally; `make test` runs every test.
SHELL := /bin/bash
export DUTIL_CACHE ?= $(HOME)/.cache/dutil
export npm_config_update_notifier := false

.PHONY: bench-gotenberg bench-gotenberg-node bench-uploads bench-uploads-node bench-storage-ops seccomp-profile bench-admission bench-depth bench-nodes bench-office bench-throughput bench-throughput-node release chart-readme lint format bench-startup bench-memory-limits bench-load bench-memory bench-scale dev real-node test test-unit test-integration test-faults test-node bench-node deps bench-deps binaries build generate typecheck bench bench-latency chart images base-images clean

dev: deps binaries build
	node dist/test/platform/dev.js

# Everything, timed by phase (deps, binaries, build, unit, images, integration; the wall time of
# each is printed at the end): test/run-tests.sh. The images are built under Debian's Docker
# engine (from the layer cache when nothing changed; a failed build fails the image tests).
# Test images are tagged per checkout: two worktrees testing at once never test each other's.
TEST_IMAGE_TAG := test-$(shell printf '%s' '$(CURDIR)' | sha256sum | cut -c1-10)
test:
	@DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) test/run-tests.sh

# ESLint (typescript-eslint with type information: floating promises, unused code), Prettier's
# check and the docs' links (each to a file of this repository, none outside it:
# test/check-doc-links.mjs); `make format` rewrites what Prettier would change. A phase of make test.
lint:
	npm run --silent lint

format:
	npx prettier --write --log-level warn '**/*.{ts,js,mjs}'

test-unit: deps build
	npx vitest run --project unit --no-isolate

# The real-node tier (docs/adr/0015): a kubelet with Debian's containerd and runc, kube-proxy,
# CoreDNS and kube-router's NetworkPolicy firewall joined to a control plane of its own; the
# images built and imported, the chart installed with Helm, test/node/ run on it. Root only.
NODE_BINARIES := kubelet kube-proxy coredns kube-router registry
test-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project node'

# Accept → runner start and accept → succeeded of a 10-page split-pdf on the real node, 50 runs.
bench-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) DUTIL_NODE_LATENCY_RUNS=50 images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project node test/node/latency.test.ts'

# make bench-throughput's bursts on the real node: completed small jobs per second per utility.
bench-throughput-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) DUTIL_NODE_THROUGHPUT=1 images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project node test/node/throughput.test.ts'

# bench-gotenberg's rounds on the real node in pool mode: the Gotenberg route's own cost beside the
# own one-call route for a pooled html-pdf, and office-pdf with 10 clients through its route.
# The file in the request on the real node: a one-call split-pdf against the same job from a URL,
# pooled and in job mode.
bench-uploads-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) DUTIL_NODE_UPLOADS_BENCH=1 images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project node test/node/uploads-bench.test.ts'

bench-gotenberg-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) DUTIL_NODE_GOTENBERG_BENCH=1 images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project node test/node/gotenberg-bench.test.ts'

# The same node joined to the platform `make dev` runs, until Ctrl-C (pods cannot reach that
# platform's loopback-only API server: containerd and the kubelet only, for trying images by hand).
real-node: binaries build
	@test/platform/install-deps.sh --node
	@test/platform/build-binaries.sh $(NODE_BINARIES)
	node dist/test/real-node/join.js .dev

# Faults during bursts of jobs (operator, gateway, API server, etcd, Redis, MinIO, PostgreSQL):
# test/faults/, on the same real platform; make test runs them with the integration tests.
test-faults: deps binaries build
	npx vitest run --project integration test/faults

test-integration: deps binaries build
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) images/docker-engine.sh run bash -c 'images/build-images.sh && npx vitest run --project integration'

# dutil-gateway, dutil-operator and dutil-runner-<utility>, built by Debian's Docker engine (started
# and stopped here when none runs). DUTIL_IMAGE_REGISTRY and DUTIL_IMAGE_TAG name them.
images:
	@images/docker-engine.sh run images/build-images.sh

# What a platform team mirrors: the chart package, every image as an OCI archive and their
# SHA-256 sums, in dist/release/<version>/ (images/release.sh; docs/install.md).
release: binaries
	@images/docker-engine.sh run images/release.sh

# The upstream base images the Dockerfiles name, provisioned from Debian packages when they cannot be pulled.
base-images:
	@images/docker-engine.sh run images/base/provision-base-images.sh

deps:
	@test/platform/install-deps.sh

# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, MinIO, Helm and Jaeger, built
# from the Go module proxy into $(DUTIL_CACHE)/bin (outside git) and reused while versions hold.
binaries:
	@test/platform/build-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio helm promtool helm-docs jaeger seccomp-profile

# charts/dutil/README.md from values.yaml and README.md.gotmpl (helm-docs; a unit test fails when it drifts).
chart-readme: binaries
	$(DUTIL_CACHE)/bin/helm-docs --chart-search-root charts/dutil --template-files README.md.gotmpl --log-level warning

# The chart's seccomp profile for Chromium's sandbox, from containerd's default (docs/adr/0031-chromium-sandbox.md).
seccomp-profile: binaries
	$(DUTIL_CACHE)/bin/seccomp-profile > charts/dutil/files/chromium-sandbox-seccomp.json

# The Helm chart's own checks (make test runs them too, with a server-side dry run and a real install).
chart: binaries
	$(DUTIL_CACHE)/bin/helm lint charts/dutil --strict -f charts/dutil/ci/lint-values.yaml
	$(DUTIL_CACHE)/bin/helm template dutil charts/dutil -f charts/dutil/ci/lint-values.yaml >/dev/null

build:
	@rm -rf dist clients/typescript/dist
	@npm run --silent build
	@npm --prefix clients/typescript run --silent build

generate:
	npx tsx runners/generate-documents.ts

typecheck:
	npm run --silent typecheck

# Each runner beside the best native tool on the same input: time and peak memory ratios.
bench: bench-deps binaries build
	node dist/test/bench/compare.js

# office-pdf's anchors: LibreOffice's cold `soffice --convert-to pdf` and unoserver's warm listener
# on the benchmark documents (one client, then BENCH_CLIENTS at once); dutil's own rows come from
# `make bench` (job mode) and `make bench-throughput-node BENCH_ONLY=office-pdf` (pool mode).
bench-office: deps build
	node dist/test/bench/office-anchors.js

bench-deps:
	@test/platform/install-deps.sh --bench
	@test/platform/build-binaries.sh mc

# Node start-up plus module loading of each runner: the bundle pods run against tsc's unbundled output.
bench-startup: build
	node dist/test/bench/runner-startup.js

# Each runner image under a real cgroup memory limit (Docker --memory = its default limit): peak memory, and OOM below need.
bench-memory-limits: bench-deps binaries build
	DUTIL_IMAGE_TAG=$(TEST_IMAGE_TAG) images/docker-engine.sh run bash -c 'images/build-images.sh && node dist/test/bench/runner-memory.js'

# Accept-to-succeeded latency of a 10-page split-pdf through the whole platform.
bench-latency: deps binaries build
	node dist/test/bench/split-latency.js
	node dist/test/bench/gateway-latency.js

# Uploads side by side on loopback, sent by curl: a direct PUT to storage, the same through a bare
# TCP relay, a multipart upload straight to storage, through the gateway, and a direct upload
# through the files host (10 MB, 200 MB, 1 GB), each with its CPU per GB by component; gateway RSS
# through 10 concurrent 500 MB uploads;
# a one-call split-pdf with the file in the request against the same job from a URL.
bench-uploads: deps binaries build
	node dist/test/bench/uploads.js

# Gotenberg's routes: what the adapter adds to a small html-pdf beside dutil's own one-call route
# (outside the job, p50), and office-pdf with 10 clients at once through /forms/libreoffice/convert;
# then unoserver's warm LibreOffice with as many clients on the same machine (bench-office).
bench-gotenberg: deps binaries build
	node dist/test/bench/gotenberg.js
	BENCH_CLIENTS=$${BENCH_GOTENBERG_CLIENTS:-10} BENCH_SECONDS=$${BENCH_GOTENBERG_SECONDS:-30} BENCH_RUNS=1 node dist/test/bench/office-anchors.js

# What each kind of storage request of a small job costs MinIO (STS, small objects, a page).
bench-storage-ops: deps binaries build
	node dist/test/bench/storage-ops.js

# Gateway resident memory over 15,000 rejected run requests (must stay flat).
bench-memory: deps binaries build
	node dist/test/bench/gateway-memory.js

# Accept-path throughput and p99 beside raw UtilityJob creates, same run and concurrency; gateway RSS
# after 10k and BENCH_LOAD_TOTAL accepted requests (BENCH_LOAD_PROFILE=1 adds a CPU profile;
# BENCH_LOAD_TRACING=1 also runs a gateway that traces every request, taking turns with one that
# does not, and prints what tracing costs).
bench-load: deps binaries build
	node dist/test/bench/load.js

# Completed small jobs per second: 16 clients for 60 s per utility (split-pdf 10 pages, html-pdf
# one small page) over 8 keys, p50/p99 accept → succeeded, CPU busy share, the in-process anchor.
bench-throughput: deps binaries build
	node dist/test/bench/throughput.js

# The job record at production volume: N = 10k, 100k, 1M jobs of one key (BENCH_SCALE_SIZES).
bench-scale: deps binaries build
	node dist/test/bench/scale.js

# The operator's admission pass at 0, 1k, 5k and 20k queued jobs (one and 16 tenants): CPU a pass, heap.
bench-admission: deps build
	node dist/test/bench/admission-pass.js

# The platform with 5,000 and 20,000 jobs queued (BENCH_DEPTHS): accepts, another client's API
# reads, 429s, RSS, kubectl get, restarts, the drain; the programs as the chart's ServiceAccounts.
bench-depth: deps binaries build
	node dist/test/bench/depth.js

# One operator leader with 100 simulated nodes (KWOK) and a simulated runner: completed jobs/s,
# CPU and API requests per job (BENCH_NODES, BENCH_CLIENTS, BENCH_SECONDS, BENCH_KCM_FLAGS).
bench-nodes: deps build
	test/platform/build-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio kwok
	node dist/test/bench/many-nodes.js

clean:
	rm -rf dist .test
