# README.md's walkthrough (sourced by scripts/test-integration.sh): the ```sh blocks
# marked <!-- walkthrough --> ("Try it", "Notes, places and live events" and the CLI),
# extracted by readme-walkthrough.py and run in order as one script with
# bash -euo pipefail, at the repository's root, against a replica on a database of
# its own that is set up as `make run` sets up its own (migrate, tenant demo,
# seed-demo). Any command failing, or any curl answered with an error status
# (each has --fail-with-body; the extractor refuses one that has not), fails it;
# so does a token written out as a placeholder.

section "README walkthrough"
README_DATABASE=lr_integration_readme
new_database "$README_DATABASE"
# As `make run` with LR_DATABASE_URL set: these are the settings the walkthrough's CLI block uses.
README_ENV=(LR_DATABASE_URL="$(db_url landmark_app "$README_DATABASE")" LR_MIGRATE_DATABASE_URL="$(db_url landmark_owner "$README_DATABASE")")
check "README: migrate (and distribute on Citus), tenant create demo --if-missing, seed-demo (what make run does)" \
    'env "${README_ENV[@]}" "$BIN" migrate >"$WORK/readme-setup.log" 2>&1 &&
     distribute "$README_DATABASE" >>"$WORK/readme-setup.log" 2>&1 &&
     env "${README_ENV[@]}" "$BIN" tenant create demo --name "Demo" --if-missing >>"$WORK/readme-setup.log" 2>&1 &&
     env "${README_ENV[@]}" "$BIN" seed-demo >>"$WORK/readme-setup.log" 2>&1'
PORT6=$(free_port)
start_replica readme "$PORT6" "$README_DATABASE" LR_IDENTITY_ALLOW_LOOPBACK=true
check "README: its replica is ready (/readyz 200)" 'wait_for_status "http://127.0.0.1:$PORT6/readyz" 200 30'

WALKTHROUGH=$WORK/readme-walkthrough.sh
check "README: walkthrough blocks extracted (no placeholder token, every curl --fail-with-body)" \
    'python3 scripts/integration/readme-walkthrough.py README.md >"$WALKTHROUGH"'
# The same README with the refresh token written out as the placeholder it once was.
sed 's/\\"\$REFRESH\\"/\\"lr_rt_...\\"/' README.md >"$WORK/README.placeholder.md"
check "README: the extractor refuses a placeholder refresh token" \
    'grep -q "lr_rt_\.\.\." "$WORK/README.placeholder.md" &&
     ! python3 scripts/integration/readme-walkthrough.py "$WORK/README.placeholder.md" >/dev/null 2>&1'
# The script's output is kept as a log, shown with the others when anything failed.
check "README: the walkthrough runs top to bottom with bash -euo pipefail" \
    '(cd "$ROOT" && env API="http://127.0.0.1:$PORT6" IDP_PORT="$(free_port)" "${README_ENV[@]}" timeout 180 bash -euo pipefail "$WALKTHROUGH" >"$WORK/readme-walkthrough.log" 2>&1)'
# Its last command's output: the script ran to its end, the CLI included.
check "README: the walkthrough reached its end (the ID-token account counted in identity-provider list)" \
    'tail -n 1 "$WORK/readme-walkthrough.log" | grep -q "demo	oidc:demo-idp	client_ids=demo-app.*identities=1"'
stop_pid "${PIDS[readme]}"
unset 'PIDS[readme]'
