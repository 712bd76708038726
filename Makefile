# The scripts' Swift flags (scripts/lib/swift-flags.sh), so that `make build` after `make test`
# rebuilds nothing.
SWIFT_FLAGS := $(shell bash -c 'source scripts/lib/swift-flags.sh && echo "$${SWIFT_FLAGS[@]}"')

.PHONY: run test test-citus test-container test-integration test-web fuzz fuzz-long build db-start db-stop psql bench clean

## Start a local PostgreSQL (unless LR_DATABASE_URL is set), migrate, seed the demo tenant and serve on 127.0.0.1:8080.
run:
	scripts/run.sh

## Install what is missing, start a throwaway PostgreSQL, run every test, stop it.
test:
	scripts/test.sh

## The Swift suite on a local Citus cluster (coordinator + 2 workers), distributed by tenant; needs Citus for PostgreSQL 15.
test-citus:
	scripts/test-citus.sh

## The image and the compose stack, built and run with podman (base images made with debootstrap, cached).
test-container:
	scripts/test-container.sh

## nginx in front of two replicas, graceful shutdown, backup and restore, deploy/ checks (own PostgreSQL; `make test` runs it too).
test-integration:
	scripts/test-integration.sh

## The web app in headless Chromium against the real service (own PostgreSQL; `make test` runs it too).
test-web:
	swift build $(SWIFT_FLAGS) --product landmark-remark
	scripts/test-web.sh

## Schemathesis against the OpenAPI document (make test runs the short one).
fuzz:
	scripts/fuzz.sh

fuzz-long:
	FUZZ_MAX_EXAMPLES=300 scripts/fuzz.sh --continue-on-failure

build:
	swift build $(SWIFT_FLAGS)

db-start:
	scripts/postgres.sh start

db-stop:
	scripts/postgres.sh stop

psql:
	scripts/postgres.sh psql

clean:
	scripts/postgres.sh stop
	rm -rf .build .data

## The benchmark: own PostgreSQL, 1,000,000 notes, wrk through nginx vs pgbench; report in bench/results/.
bench:
	bench/run.sh

.PHONY: bench-quick
## The same with 100,000 notes, 8 and 32 connections, 5-second runs.
bench-quick:
	bench/run.sh --quick

.PHONY: bench-peers
## The benchmark plus the Vapor peer (bench/peers/vapor-peer, built here: 10-18 min cold) on nearest and create.
bench-peers:
	bench/run.sh --peers

.PHONY: bench-photos
## Photo uploads (12 MP JPEG and HEIC) and variant serving through nginx (bench/photos.sh).
bench-photos:
	bench/photos.sh
