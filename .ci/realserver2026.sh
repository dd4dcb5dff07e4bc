#!/usr/bin/env bash
# The 2026 differential suite (issue 22): a private real Agenta v0.113
# backend from ../shared/realserver-2026, on free shifted ports and its
# own RS_WORK, stopped and removed on exit; then TestRealServer2026 against
# it and against agentatest's 2026 fake, and TestRealServer2026Repeats
# (a repeated run with a seeded flaky app). Fails when a test fails or
# skips. Each step's time is printed (on 2 loaded cores: setup ~45 s,
# fresh start ~90 s, the test ~30 s, stop ~15 s).
#
# Env: RS26_KIT (default ../shared/realserver-2026 beside the clone),
#      RS26_BASE (the first port to try; default 19500).
set -euo pipefail
cd "$(dirname "$0")/.."
kit=$(cd "${RS26_KIT:-../shared/realserver-2026}" 2>/dev/null && pwd) ||
  { echo "realserver2026: ${RS26_KIT:-../shared/realserver-2026} is absent"; exit 1; }

step() { # name command...: run, print the time it took
  local name=$1 start=$SECONDS; shift
  echo "-- $name"
  "$@"
  echo "-- $name: $((SECONDS - start)) s"
}

free() { ! ss -ltn "( sport = :$1 )" 2>/dev/null | grep -q LISTEN; }

# Six ports the kit listens on, and three it only names: base + the
# kit's own offsets (19000, 19090, 19080, 19032, 19079, 19081, 19067,
# 19033, 19065).
base=${RS26_BASE:-19500}
for try in $(seq 0 9); do
  b=$((base + 100 * try)); ok=1
  for off in 0 90 80 32 79 81 67 33 65; do free $((b + off)) || { ok=0; break; }; done
  [ "$ok" = 1 ] && break
done
[ "$ok" = 1 ] || { echo "realserver2026: no free port block from $base"; exit 1; }
export RS_PORT=$b RS_SVC_PORT=$((b + 90)) RS_APP_PORT=$((b + 80)) RS_PG_PORT=$((b + 32))
export RS_REDIS_V_PORT=$((b + 79)) RS_REDIS_D_PORT=$((b + 81)) RS_ST_PORT=$((b + 67))
export RS_STORE_PORT=$((b + 33)) RS_RUNNER_PORT=$((b + 65))
RS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/agenta-rs26-ci.XXXXXX")
export RS_WORK
chmod 755 "$RS_WORK" # Postgres runs as its own user under it

cleanup() {
  local status=$?
  echo "-- stop (RS_WORK=$RS_WORK)"
  local start=$SECONDS
  "$kit/stop.sh" >/dev/null 2>&1 || true
  echo "-- stop: $((SECONDS - start)) s"
  if [ "$status" != 0 ] && [ -d "$RS_WORK/logs" ]; then
    for log in api worker-queues worker-streams services app; do
      echo "---- tail of $log.log"; tail -n 30 "$RS_WORK/logs/$log.log" 2>/dev/null || true
    done
  fi
  rm -rf "$RS_WORK"
  exit "$status"
}
trap cleanup EXIT

total=$SECONDS
echo "realserver2026: RS_WORK=$RS_WORK, API on 127.0.0.1:$RS_PORT, app on $RS_APP_PORT"
step setup "$kit/setup.sh"
step start env RS_FRESH=1 "$kit/start.sh"
api=http://127.0.0.1:$RS_PORT/api
start=$SECONDS
key=$(python3 "$kit/mkaccount.py" "$api" 2>/dev/null)
[ -n "$key" ] || { echo "realserver2026: mkaccount.py gave no key"; exit 1; }
python3 "$kit/seed.py" "$api" "$key" "http://127.0.0.1:$RS_APP_PORT" >"$RS_WORK/ids.json"
echo "-- account and seed: $((SECONDS - start)) s"

export AGENTA_RS26_URL=$api AGENTA_RS26_KEY=$key AGENTA_RS26_APP_URL=http://127.0.0.1:$RS_APP_PORT
export AGENTA_RS26_IDS=$RS_WORK/ids.json
# must_pass TEST FILE: runs go test -run ^TEST$ in the root package; fails
# the script when the test fails or skips, with the tail of its log.
must_pass() {
  local name=$1 file=$2 log status=0 start=$SECONDS
  log=$(mktemp)
  go test -count=1 -v -run "^$name\$" . >"$log" 2>&1 || status=$?
  echo "-- go test $name: $((SECONDS - start)) s"
  grep -E "^(=== RUN|--- |ok|FAIL|PASS)|$file" "$log" | cut -c1-2000 || true
  if [ "$status" != 0 ] || grep -q -- '--- SKIP' "$log" || ! grep -q -- "--- PASS: $name" "$log"; then
    tail -n 100 "$log"
    echo "realserver2026: $name failed or did not run"
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}
must_pass TestRealServer2026 realserver2026_test.go
# The preflight (issue 26): wrong ids and a test set without the app's
# input, found before anything is created, on this server too.
must_pass TestPreflightRealServer2026 preflight_realserver_test.go
# A run with repeats and a flaky app (issue 27): the test serves its own
# seeded copy of the kit's app with the kit's python, so it needs RS_WORK.
export AGENTA_RS26_WORK=$RS_WORK AGENTA_RS26_KIT=$kit
must_pass TestRealServer2026Repeats realserver2026_repeats_test.go

# One job across generations (issue 22): the eval run cases of
# cmd/agenta/crossgen_test.go against this server, seeded as the mid-2024
# kit's seed.py seeds its server (a test set with failing rows, an exact
# match named "Exact match"), their verdicts, exit codes and reports
# compared with the mid-2024 server's when .ci/run ran those first
# (AGENTA_CROSSGEN_2024_DIGEST).
start=$SECONDS
crossgen_ids=$(python3 - "$api" "$key" <<'PY'
import json, secrets, sys, urllib.error, urllib.request
base, key = sys.argv[1].rstrip("/"), sys.argv[2]
suffix = secrets.token_hex(4)  # slugs are unique in a project
def post(path, body):
    req = urllib.request.Request(base + path, method="POST", data=json.dumps(body).encode(),
        headers={"Authorization": "ApiKey " + key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        sys.exit(f"POST {path}: {e.code} {e.read()[:500]!r}")
rows = [("France", "Paris"), ("ERR-1", "x"), ("Germany", "Bonn"), ("ERR-2", "y")]
ts = post("/simple/testsets/", {"testset": {"slug": "with-errors-" + suffix, "name": "with-errors",
    "data": {"testcases": [{"data": {"country": c, "correct_answer": a}} for c, a in rows]}}})
mismatch = post("/simple/testsets/", {"testset": {"slug": "wrong-columns-" + suffix, "name": "wrong-columns",
    "data": {"testcases": [{"data": {"nation": c, "correct_answer": a}} for c, a in rows[:1] + [("Germany", "Berlin"), ("Italy", "Rome")]]}}})
ev = post("/simple/evaluators/", {"evaluator": {"slug": "exact-match-" + suffix, "name": "Exact match",
    "data": {"uri": "agenta:builtin:auto_exact_match:v0", "parameters": {"correct_answer_key": "correct_answer"}}}})
print(ts["testset"]["id"], ev["evaluator"]["id"], mismatch["testset"]["id"])
PY
)
read -r err_testset exact_match mismatch_testset <<<"$crossgen_ids"
[ -n "$mismatch_testset" ] || { echo "realserver2026: seeding the eval run cases failed"; exit 1; }
seed_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ids"][sys.argv[2]])' "$RS_WORK/ids.json" "$1"; }
keyfile="$RS_WORK/key"
printf '%s\n' "$key" >"$keyfile"
against=""
if [ -s "${AGENTA_CROSSGEN_2024_DIGEST:-}" ]; then against=$AGENTA_CROSSGEN_2024_DIGEST; fi
log=$(mktemp)
status=0
AGENTA_CROSSGEN_HOST=$api AGENTA_CROSSGEN_KEY_FILE=$keyfile AGENTA_CROSSGEN_APP=$(seed_id application_id) \
  AGENTA_CROSSGEN_VARIANT=$(seed_id application_variant_id) AGENTA_CROSSGEN_TESTSET=$(seed_id testset_id) \
  AGENTA_CROSSGEN_ERR_TESTSET=$err_testset AGENTA_CROSSGEN_EVALUATOR=$exact_match AGENTA_CROSSGEN_AGAINST=$against \
  AGENTA_CROSSGEN_MISMATCH_TESTSET=$mismatch_testset \
  go test -count=1 -v -run '^TestEvalRunOnServer$' ./cmd/agenta >"$log" 2>&1 || status=$?
echo "-- go test TestEvalRunOnServer (the eval run cases${against:+, compared with those of the mid-2024 server}): $((SECONDS - start)) s"
if [ "$status" != 0 ] || ! grep -q -- '--- PASS: TestEvalRunOnServer' "$log"; then
  tail -n 150 "$log"
  echo "realserver2026: the eval run cases failed or did not run"
  rm -f "$log"
  exit 1
fi
[ -n "$against" ] || echo "realserver2026: (no mid-2024 digests to compare with: run by itself, not from .ci/run)"
rm -f "$log"

# agenta eval run --repeats 3 (issue 27): the run's own repeats, 5 test
# cases × 3, each variant a run; the bound gates read cases.
start=$SECONDS
go build -o "$RS_WORK/agenta-cli" ./cmd/agenta
status=0
variant=$(seed_id application_variant_id)
AGENTA_HOST=$api AGENTA_API_KEY=$key "$RS_WORK/agenta-cli" eval run --app "$(seed_id application_id)" --testset "$(seed_id testset_id)" \
  --variant "$variant" --variant "$variant" --evaluator "$(seed_id evaluator_id)" \
  --gate 'low(Exact capital) >= 0.5' --gate 'flaky(Exact capital) <= 0' --gate 'diff_low(Exact capital) >= -0.05' \
  --repeats 3 --interval 500ms --timeout 3m >"$RS_WORK/repeats.out" 2>"$RS_WORK/repeats.err" || status=$?
echo "-- agenta eval run --repeats 3: exit $status, $((SECONDS - start)) s"
# Exit 1: 5 cases, however alike, cannot show "at most 5 points worse".
if [ "$status" -ne 1 ] || ! grep -q ': 5 rows × 3 repeats, ' "$RS_WORK/repeats.out" ||
  ! grep -q ': 5 test cases × 3 repeats paired by ' "$RS_WORK/repeats.out" ||
  ! grep -q '^low(Exact capital) >= 0.5 .* pass' "$RS_WORK/repeats.out" ||
  ! grep -q 'inconclusive: the bound is -0.35[0-9]*; about [0-9]* paired cases would be needed' "$RS_WORK/repeats.err"; then
  cat "$RS_WORK/repeats.out" "$RS_WORK/repeats.err"
  echo "realserver2026: agenta eval run --repeats 3 did not judge 5 test cases × 3 repeats (want exit 1: diff_low inconclusive, low passing)"
  exit 1
fi
echo "realserver2026: passed; $((SECONDS - total)) s before stop"
