# Shared by the CLI test scripts (sourced, not run). The caller sets `tmp` to a scratch folder.
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_status STATUS NEEDLE CMD...: runs CMD, checks its exit status and that stderr contains NEEDLE.
expect_status() {
  local want=$1 needle=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [[ $got == "$want" ]] || fail "'$*' exited $got, expected $want (stderr: $(cat "$tmp/err"))"
  grep -qF -- "$needle" "$tmp/err" || fail "'$*': stderr lacks '$needle': $(cat "$tmp/err")"
}
