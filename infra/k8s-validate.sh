#!/usr/bin/env bash
# Renders every Kubernetes kustomization of k8s/ (the base, each overlay, and each of them with
# every combination of the optional components) with kustomize, and validates every object
# strictly against the Kubernetes API schemas, offline, for the Kubernetes versions in
# K8S_VERSIONS (default 1.31 and 1.34), plus the portal's own rules (infra/k8s-validate/check.py).
#
# Tools, installed once into K8S_VALIDATE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/
# evidence-portal/k8s-validate) and reused:
#   kustomize v5.6.0, built with Go (`go install`; newer versions need a newer Go than 1.25),
#   kubernetes-validate from PyPI (its schemas are bundled) in a venv, made again when
#   infra/k8s-validate/requirements.txt changes.
# The example overlay's git-ignored secret files are made from their *.env.example templates in a
# temporary copy of k8s/; the work tree is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
KUSTOMIZE_VERSION=v5.6.0
versions="${K8S_VERSIONS:-1.31.0,1.34.0}"
cache="${K8S_VALIDATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/k8s-validate}"
mkdir -p "$cache"

kustomize="$cache/bin/kustomize"
if ! "$kustomize" version 2>/dev/null | grep -qx "$KUSTOMIZE_VERSION"; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  echo "k8s: installing kustomize $KUSTOMIZE_VERSION into $cache/bin (go install)"
  GOBIN="$cache/bin" "$go" install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi

venv="$cache/venv"
if ! cmp -s infra/k8s-validate/requirements.txt "$venv/requirements.installed" 2>/dev/null; then
  echo "k8s: installing kubernetes-validate into $venv"
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r infra/k8s-validate/requirements.txt
  cp infra/k8s-validate/requirements.txt "$venv/requirements.installed"
fi

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

renders=()
n=0
for target in "${targets[@]}"; do
  # Every subset of the components (a bit mask over the list).
  for ((mask = 0; mask < (1 << ${#components[@]}); mask++)); do
    chosen=()
    for i in "${!components[@]}"; do
      if ((mask & (1 << i))); then chosen+=("${components[$i]}"); fi
    done
    label="$target"
    dir="$work/k8s/$target"
    if ((${#chosen[@]})); then
      label="$target + $(IFS=+; echo "${chosen[*]}" | sed 's/+/ + /g')"
      n=$((n + 1))
      dir="$work/k8s/renders/$n"
      mkdir -p "$dir"
      {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        echo "resources: [../../$target]"
        echo "components:"
        for c in "${chosen[@]}"; do echo "  - ../../components/$c"; done
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

"$venv/bin/python" infra/k8s-validate/check.py "$versions" "${renders[@]}"
