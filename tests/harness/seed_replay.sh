#!/usr/bin/env bash
# STRATA_TEST_SEED replays random cases: the same seed prints the same seeds (whole run, and one
# test alone), another seed prints others, and a failing random case prints its replay line.
#   seed_replay.sh BOUNDS_SEED_TEST_BINARY
set -euo pipefail
bin=${1:?usage: seed_replay.sh BOUNDS_SEED_TEST_BINARY}
seeds() { STRATA_TEST_SEED=$1 "$bin" --gtest_filter="${2:-SeedReplay.*}" | grep '^seeds:' || true; }
first=$(seeds 12345)
again=$(seeds 12345)
other=$(seeds 12346)
alone=$(seeds 12345 SeedReplay.FirstDrawIsIndependentOfEarlierTests)
[[ -n $first ]] || { echo "FAIL: no seeds printed"; exit 1; }
[[ $first == "$again" ]] || { echo "FAIL: one STRATA_TEST_SEED, two sets of seeds:"; echo "$first"; echo "$again"; exit 1; }
[[ $first != "$other" ]] || { echo "FAIL: two STRATA_TEST_SEEDs, one set of seeds"; exit 1; }
grep -qxF "$alone" <<<"$first" || { echo "FAIL: the test alone drew '$alone', in the run: $first"; exit 1; }
grep -q '^seeds: run 12345 ' <<<"$first" || { echo "FAIL: the run seed is not STRATA_TEST_SEED: $first"; exit 1; }
demo=$(STRATA_TEST_REPLAY_DEMO=1 STRATA_TEST_SEED=777 "$bin" --gtest_filter=SeedReplay.FailurePrintsTheReplayLine 2>&1 || true)
grep -qF 'random case: replay with STRATA_TEST_SEED=777 --gtest_filter=SeedReplay.FailurePrintsTheReplayLine' <<<"$demo" ||
  { echo "FAIL: no replay line after a failure:"; echo "$demo"; exit 1; }
if STRATA_TEST_SEED=banana "$bin" --gtest_filter=SeedReplay.SeedsDifferPerDrawAndSalt >/dev/null 2>&1; then
  echo "FAIL: STRATA_TEST_SEED=banana was accepted"; exit 1
fi
echo "seed replay: ok"
