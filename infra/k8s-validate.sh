#!/usr/bin/env bash
# Renders every Kubernetes kustomization of k8s/ (the base and each overlay: alone, with each
# optional component alone, and with every largest set of components that go together) with
# kustomize, and validates every object strictly against the Kubernetes API schemas, offline, for
# the Kubernetes versions in K8S_VERSIONS (default 1.31 and 1.34), the custom resources against
# their projects' CustomResourceDefinitions, plus the portal's own rules
# (infra/k8s-validate/check.py).
# Components that exclude each other say so in their kustomization.yaml with a line
#   # k8s-validate: excludes <other component>
# and are never rendered together.
#
# Tools, installed once into K8S_VALIDATE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/
# evidence-portal/k8s-validate) and reused:
#   kustomize v5.6.0, built with Go (`go install`; newer versions need a newer Go than 1.25),
#   kubernetes-validate from PyPI (its schemas are bundled) in a venv, made again when
#   infra/k8s-validate/requirements.txt changes.
# The CRDs come from the projects' Go modules at the versions below (`go mod download`, kept in
# Go's module cache, GOMODCACHE, so a second run downloads nothing): Gateway API (standard
# channel), Envoy Gateway, KEDA, Prometheus Operator.
# The example overlay's git-ignored secret files are made from their *.env.example templates in a
# temporary copy of k8s/; the work tree is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
KUSTOMIZE_VERSION=v5.6.0
GATEWAY_API_VERSION=v1.6.3
ENVOY_GATEWAY_VERSION=v1.9.1
KEDA_VERSION=v2.17.1
PROMETHEUS_OPERATOR_VERSION=v0.85.0
versions="${K8S_VERSIONS:-1.31.0,1.34.0}"
cache="${K8S_VALIDATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/k8s-validate}"
mkdir -p "$cache"

go=$(command -v go || echo /usr/local/go/bin/go)
kustomize="$cache/bin/kustomize"
# The version installed is written beside it (a build without VCS stamping says "(devel)").
if [ "$(cat "$kustomize.version" 2>/dev/null)" != "$KUSTOMIZE_VERSION" ] || ! [ -x "$kustomize" ]; then
  echo "k8s: installing kustomize $KUSTOMIZE_VERSION into $cache/bin (go install)"
  GOBIN="$cache/bin" "$go" install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  echo "$KUSTOMIZE_VERSION" > "$kustomize.version"
fi

venv="$cache/venv"
if ! cmp -s infra/k8s-validate/requirements.txt "$venv/requirements.installed" 2>/dev/null; then
  echo "k8s: installing kubernetes-validate into $venv"
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r infra/k8s-validate/requirements.txt
  cp infra/k8s-validate/requirements.txt "$venv/requirements.installed"
fi

# The module's directory in Go's module cache (downloaded once).
module_dir() {
  local dir
  dir=$(cd "$cache" && GOFLAGS=-mod=mod "$go" mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "k8s: PROBLEM go mod download $1 gave no directory" >&2; exit 1; }
  echo "$dir"
}
crds=()
gateway_api=$(module_dir "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION")
crds+=("$gateway_api"/config/crd/standard/gateway.networking.k8s.io_*.yaml)
envoy_gateway=$(module_dir "github.com/envoyproxy/gateway@$ENVOY_GATEWAY_VERSION")
crds+=("$envoy_gateway"/charts/gateway-helm/charts/crds/crds/generated/gateway.envoyproxy.io_*trafficpolicies.yaml)
keda=$(module_dir "github.com/kedacore/keda/v2@$KEDA_VERSION")
crds+=("$keda"/config/crd/bases/keda.sh_scaledobjects.yaml "$keda"/config/crd/bases/keda.sh_scaledjobs.yaml)
prometheus_operator=$(module_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")
crds+=("$prometheus_operator"/example/prometheus-operator-crd/monitoring.coreos.com_{podmonitors,servicemonitors,prometheusrules}.yaml)
for crd in "${crds[@]}"; do [ -f "$crd" ] || { echo "k8s: PROBLEM no CRD file $crd" >&2; exit 1; }; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r k8s "$work/k8s"
# Stand-ins for the git-ignored secret files: every key of each template gets a dummy value.
find "$work/k8s" -name '*.env.example' | while read -r template; do
  sed -E 's/^([A-Z0-9_]+)=.*$/\1=not-a-secret/' "$template" > "${template%.example}"
done

targets=(base)
for overlay in k8s/overlays/*/; do targets+=("overlays/$(basename "$overlay")"); done
components=()
for component in k8s/components/*/; do components+=("$(basename "$component")"); done

excluded() { # true when components $1 and $2 must not be rendered together
  grep -qx "# k8s-validate: excludes $2" "k8s/components/$1/kustomization.yaml" ||
    grep -qx "# k8s-validate: excludes $1" "k8s/components/$2/kustomization.yaml"
}
# Sets of components to render: none, each alone, and every largest set without an excluded pair
# (components in their directory order; a set is a space-separated list).
sets=("")
for c in "${components[@]}"; do sets+=("$c"); done
largest=("")
for c in "${components[@]}"; do
  next=()
  for set in "${largest[@]}"; do
    clash=""
    for other in $set; do excluded "$c" "$other" && clash="$other"; done
    if [ -z "$clash" ]; then next+=("${set:+$set }$c"); else
      next+=("$set")
      # Also the set with c in place of everything it excludes.
      swapped=""
      for other in $set; do excluded "$c" "$other" || swapped="${swapped:+$swapped }$other"; done
      next+=("${swapped:+$swapped }$c")
    fi
  done
  largest=("${next[@]}")
done
# Keep only the largest (a set inside another is dropped), then add them.
for set in "${largest[@]}"; do
  inside=""
  for other in "${largest[@]}"; do
    [ "$other" = "$set" ] && continue
    all=1; for c in $set; do [[ " $other " == *" $c "* ]] || all=""; done
    [ -n "$all" ] && [ ${#other} -gt ${#set} ] && inside=1
  done
  if [ -z "$inside" ] && [[ "$set" == *" "* ]]; then
    dup=""; for s in "${sets[@]}"; do [ "$s" = "$set" ] && dup=1; done
    [ -z "$dup" ] && sets+=("$set")
  fi
done

renders=()
n=0
for target in "${targets[@]}"; do
  for set in "${sets[@]}"; do
    label="$target"
    dir="$work/k8s/$target"
    if [ -n "$set" ]; then
      label="$target + ${set// / + }"
      n=$((n + 1))
      dir="$work/k8s/renders/$n"
      mkdir -p "$dir"
      {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        echo "resources: [../../$target]"
        echo "components:"
        for c in $set; do echo "  - ../../components/$c"; done
      } > "$dir/kustomization.yaml"
    fi
    out="$work/render-${#renders[@]}.yaml"
    if ! "$kustomize" build "$dir" > "$out"; then
      echo "k8s: PROBLEM kustomize build failed for $label" >&2
      exit 1
    fi
    renders+=("$label=$out")
  done
done

crd_args=()
for crd in "${crds[@]}"; do crd_args+=("--crd=$crd"); done
"$venv/bin/python" infra/k8s-validate/check.py "${crd_args[@]}" "$versions" "${renders[@]}"
