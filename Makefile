.PHONY: run test build db-start db-stop psql bench clean

## Start a local PostgreSQL (unless LR_DATABASE_URL is set), migrate, seed the demo tenant and serve on 127.0.0.1:8080.
run:
	scripts/run.sh

## Install what is missing, start a throwaway PostgreSQL, run every test, stop it.
test:
	scripts/test.sh

build:
	swift build

db-start:
	scripts/postgres.sh start

db-stop:
	scripts/postgres.sh stop

psql:
	scripts/postgres.sh psql

clean:
	scripts/postgres.sh stop
	rm -rf .build .data
