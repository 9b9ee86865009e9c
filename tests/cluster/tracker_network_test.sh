#!/usr/bin/env bash
# The tracker on the login node's address with a token and TLS (a throwaway CA made by the test),
# reached from a compute node over the cluster's network:
#  - without the token (or with a wrong one) the daemon answers 401; with it, 200;
#  - a plain-HTTP client gets no answer from the TLS port;
#  - nmt-train on node1 reports over TLS (NMT_TRACKER_URL=https://..., NMT_TRACKER_CA_FILE) and
#    the run is recorded, finished, with its metric points;
#  - nmt-train on node2 without the token trains on (exit 0), is recorded nowhere, and says the
#    daemon refused it.
# Usage: tracker_network_test.sh BUILD_DIR DATA_DIR CLUSTER_DIR PYTHON
set -euo pipefail
# shellcheck source=tests/cluster/cluster_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster_test_lib.sh"
cluster_test_init "$@"
TLS=1 start_tracker
ca=(--cacert "$work/tls/ca.crt")
code() { on node1 curl -s -o /dev/null -w '%{http_code}' "$@" || true; }
[[ $(code "${ca[@]}" "$tracker_url/api/runs") == 401 ]] || fail "no token: not 401"
[[ $(code "${ca[@]}" -H "Authorization: Bearer wrong" "$tracker_url/api/runs") == 401 ]] ||
  fail "a wrong token: not 401"
[[ $(code "${ca[@]}" -H "Authorization: Bearer $(cat "$work/token")" "$tracker_url/api/runs") == 200 ]] ||
  fail "the token over TLS: not 200"
plain=$(code -m 5 -H "Authorization: Bearer $(cat "$work/token")" "http://${tracker_url#https://}/api/runs")
[[ $plain == 000 ]] || fail "a plain-HTTP request to the TLS port got HTTP status $plain"
echo "401 without or with a wrong token, 200 with it over TLS, no answer to plain HTTP"

tiny_config "$work/tiny.yaml" 10
args=(--config "$work/tiny.yaml" --data "$work/shards" --threads 1)
on node1 env NMT_TRACKER_URL="$tracker_url" NMT_TRACKER_TOKEN_FILE="$work/token" \
  NMT_TRACKER_CA_FILE="$work/tls/ca.crt" "$bin/nmt-train" "${args[@]}" --run-dir "$work/tls-run" \
  --experiment over-tls > "$work/tls-run.log" 2>&1 || { cat "$work/tls-run.log"; fail "nmt-train over TLS"; }
tracked_run over-tls > "$work/run.json"
"$python" - "$work/run.json" <<'PY' || fail "the run reported over TLS"
import json, sys
run = json.load(open(sys.argv[1])); info = run.get("run", run)
assert info["status"] == "finished", info["status"]
assert "train/loss" in run["metric_keys"], run["metric_keys"]
print("recorded over TLS:", info["status"], len(run["metric_keys"]), "metric keys")
PY

on node2 env NMT_TRACKER_URL="$tracker_url" NMT_TRACKER_CA_FILE="$work/tls/ca.crt" \
  "$bin/nmt-train" "${args[@]}" --run-dir "$work/no-token" --experiment no-token \
  > "$work/no-token.log" 2>&1 || { cat "$work/no-token.log"; fail "nmt-train without the token failed"; }
[[ -f "$work/no-token/$(printf 'checkpoints/step-%08d.h5' 10)" ]] || fail "no training without the token"
grep -Eiq "401|token" "$work/no-token.log" || { cat "$work/no-token.log"; fail "no word of the refusal"; }
grep -Ei "401|token" "$work/no-token.log" | head -2
n=$(tracker_get "/api/runs?experiment=no-token" | "$python" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
((n == 0)) || fail "a run without the token was recorded"
echo ok
