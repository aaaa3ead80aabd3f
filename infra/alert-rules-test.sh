#!/usr/bin/env bash
# Tests the portal's alerting rules (k8s/components/prometheus-operator/alerts.yaml) with
# Prometheus's own `promtool`: `promtool check rules` on the rule groups, then `promtool test rules`
# on k8s/components/prometheus-operator/tests/*.test.yaml. Also checks that every alert fires in
# at least one test and has its runbook entry in docs/OPERATIONS.md ("## Runbook").
#
#   infra/alert-rules-test.sh           install promtool when missing, then test
#   infra/alert-rules-test.sh install   only install it (CI starts this early, in the background)
#
# promtool is built once with Go (`go install github.com/prometheus/prometheus/cmd/promtool@
# PROMTOOL_VERSION`, several minutes on 2 cores) into PROMTOOL_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/promtool/<version>) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
PROMTOOL_VERSION=v0.316.0
cache="${PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/promtool/$PROMTOOL_VERSION}"
promtool="$cache/promtool"

if ! [ -x "$promtool" ]; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  echo "alerts: building promtool $PROMTOOL_VERSION into $cache (go install)"
  tmp="$cache.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  GOBIN="$tmp" "$go" install -trimpath -ldflags='-s -w' "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION"
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache" && mv "$tmp" "$cache"
fi
[ "${1:-}" = install ] && exit 0

component=k8s/components/prometheus-operator
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$component"/tests/*.test.yaml "$work/"
# The PrometheusRule's groups as a plain rule file, and the coverage checks (yaml: a dev dependency).
node --input-type=module - "$component/alerts.yaml" "$work" docs/OPERATIONS.md <<'JS'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
const [rulesPath, work, operations] = process.argv.slice(2);
const rule = parse(readFileSync(rulesPath, 'utf8'));
writeFileSync(join(work, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
const alerts = rule.spec.groups.flatMap((group) => group.rules.filter((r) => r.alert).map((r) => r.alert));
const fired = new Set();
for (const file of readdirSync(work).filter((f) => f.endsWith('.test.yaml'))) {
  for (const test of parse(readFileSync(join(work, file), 'utf8')).tests) {
    for (const check of test.alert_rule_test ?? []) if ((check.exp_alerts ?? []).length) fired.add(check.alertname);
  }
}
const doc = readFileSync(operations, 'utf8');
const runbook = doc.slice(doc.indexOf('\n## Runbook'));
const problems = [];
for (const alert of alerts) {
  if (!fired.has(alert)) problems.push(`${alert}: no test where it fires`);
  if (!runbook.includes(`\`${alert}\``)) problems.push(`${alert}: no entry in the runbook of ${operations}`);
}
for (const problem of problems) console.error(`alerts: PROBLEM ${problem}`);
if (problems.length) process.exit(1);
console.log(`alerts: ${alerts.length} alerts, each fired by a test and in the runbook`);
JS
"$promtool" check rules "$work/rules.yaml"
(cd "$work" && "$promtool" test rules ./*.test.yaml)
