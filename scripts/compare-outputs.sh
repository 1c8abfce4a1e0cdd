#!/usr/bin/env bash
# Checks that two builds of wisp give the same bytes: the main job's results.json, every
# reproduction's output folder at --quick (summary.json, the CSVs, the figures, report.html) and
# `wisp sim scenarios/*.toml --json`. For a refactoring: build the commit before it and the one
# after, then
#
#   scripts/compare-outputs.sh OLD/target/release/wisp NEW/target/release/wisp [OUT]
#
# OUT (default: a temporary folder) keeps both sides' files. Prints each comparison and exits 1
# if any differs. Takes about ten minutes on two cores (the reproductions at --quick twice).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
out=${3:-$(mktemp -d)}
mkdir -p "$out"
schemes=ideal,sprout,sprout-ewma,gcc,gcc-grouping:prefilter=libwebrtc,cubic,newreno,vegas,compound,ledbat,cbr
status=0
same() {
  if [ ! -e "$1" ] && [ ! -e "$2" ]; then echo "absent    $3 (neither side writes it)"; return; fi
  if cmp -s "$1" "$2"; then echo "same      $3"; else echo "DIFFERENT $3"; status=1; fi
}
for side in old new; do
  w=${!side}
  mkdir -p "$out/$side"
  "$w" bench --traces traces/cellular --out "$out/$side/bench" --schemes "$schemes" >/dev/null 2>&1
  for s in scenarios/*.toml; do
    "$w" sim "$s" --json >"$out/$side/sim-$(basename "$s" .toml).json" 2>/dev/null
  done
  for p in sprout gcc-wifi mehrotra wbest kwikr alfalfa; do
    "$w" reproduce "$p" --quick --out "$out/$side/rep-$p" >"$out/$side/rep-$p.stdout" 2>/dev/null
  done
done
same "$out/old/bench/results.json" "$out/new/bench/results.json" "main job results.json"
for f in "$out"/old/sim-*.json; do
  same "$f" "$out/new/$(basename "$f")" "wisp sim $(basename "$f" .json | sed 's/^sim-//').toml --json"
done
for p in sprout gcc-wifi mehrotra wbest kwikr alfalfa; do
  same "$out/old/rep-$p/summary.json" "$out/new/rep-$p/summary.json" "reproduce $p --quick: summary.json"
  if diff -rq "$out/old/rep-$p" "$out/new/rep-$p" >/dev/null; then
    echo "same      reproduce $p --quick: every file"
  else
    echo "DIFFERENT reproduce $p --quick: $(diff -rq "$out/old/rep-$p" "$out/new/rep-$p" | wc -l) files"
    status=1
  fi
done
echo "files in $out"
exit $status
