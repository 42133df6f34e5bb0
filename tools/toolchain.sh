#!/usr/bin/env bash
# Builds the offline toolchain from the Go module proxy into a cache outside the repo, one directory per piece,
# keyed by everything that went into it; a piece already in the cache is skipped.
#
#   tools/toolchain.sh            build what is missing, then print the bin directory
#   tools/toolchain.sh --bin-dir  print the bin directory if the toolchain is complete (exit 1 otherwise)
#   tools/toolchain.sh prune      remove cached pieces that the current versions no longer use
#
# MYAPP_TOOLCHAIN_BIN=/dir overrides the bin directory, for people who bring their own binaries (same names).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/versions.env
source "$here/versions.env"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
cache_root=${MYAPP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/myapp-platform}/toolchain
go_version=$(go env GOVERSION)
started=$(date +%s)

log() { printf '[toolchain %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }

# Build flags, tags and packages of each piece: its recipe, part of its cache key.
tags=osusergo,grpcnotrace
recipe() {
  case "$1" in
    etcd) echo "|./cmd/etcd" ;;
    kube) echo "$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl" ;;
    kwok) echo "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${KUBE_VERSION#v}|sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl" ;;
    pulumi) echo "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION -X main.version=${PULUMI_VERSION#v}|github.com/pulumi/pulumi/pkg/v3/cmd/pulumi ./cmd/pulumi-language-nodejs" ;;
    pulumi-kubernetes) echo "-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$PULUMI_KUBERNETES_VERSION|./cmd/pulumi-resource-kubernetes" ;;
  esac
}

# key PIECE: hash of the wrapper module (go.mod, go.sum, our sources), the Go version, the pinned versions and
# the piece's recipe, so any change to what goes into a piece gives it a new cache directory.
key() {
  local dir="$here/go/$1"
  { echo "$go_version $tags"; recipe "$1"; cat "$here/versions.env"
    find "$dir" -name '*.go' -o -name 'go.mod' -o -name 'go.sum' | sort | xargs cat
    [ "$1" != pulumi ] || cat "$here/bin/pulumi-resource-pulumi-nodejs"
  } | sha256sum | cut -c1-16
}

piece_dir() { echo "$cache_root/$1-$(key "$1")"; }

# build PIECE: go build its recipe into the piece's cache directory, atomically (tmp dir, then rename).
build() {
  local piece=$1 r; r=$(recipe "$1")
  local ldflags=${r%%|*}; read -r -a pkgs <<<"${r#*|}"; set -- "${pkgs[@]}"
  local out; out=$(piece_dir "$piece")
  if [ -f "$out/.complete" ]; then log "$piece: cached ($out)"; return; fi
  local tmp="$out.tmp.$$" t0; t0=$(date +%s)
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  log "$piece: building $* (a cold build takes minutes; Go's own caches make the next one fast)"
  if ! (cd "$here/go/$piece" && go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$tmp/bin/" "$@") >"$tmp/build.log" 2>&1; then
    tail -n 30 "$tmp/build.log" >&2
    log "FAILED: $piece ($*). Full log: $tmp/build.log. Try: 'go env GOPROXY' reachable? 'go clean -cache' if the cache is corrupt; then npm run toolchain again."
    exit 1
  fi
  # pulumi finds its bundled plugins next to its own (resolved) binary: the dynamic-provider launcher goes there.
  [ "$piece" != pulumi ] || cp "$here/bin/pulumi-resource-pulumi-nodejs" "$tmp/bin/"
  touch "$tmp/.complete"; rm -rf "$out"; mv "$tmp" "$out"
  log "$piece: built in $(( $(date +%s) - t0 ))s -> $out/bin"
}

kube_ldflags() {
  local v=$KUBE_VERSION minor; minor=$(echo "$v" | cut -d. -f2)
  local f=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    f+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$f"
}

# The wrapper modules must pin what versions.env says, or the cache key would lie.
verify_versions() {
  local want
  for want in "kube:k8s.io/kubernetes $KUBE_VERSION" "etcd:go.etcd.io/etcd/server/v3 $ETCD_VERSION" \
      "kwok:sigs.k8s.io/kwok $KWOK_VERSION" "pulumi:github.com/pulumi/pulumi/pkg/v3 $PULUMI_VERSION" \
      "pulumi-kubernetes:github.com/pulumi/pulumi-kubernetes/sdk/v4 v$PULUMI_KUBERNETES_VERSION"; do
    grep -q "${want#*:}" "$here/go/${want%%:*}/go.mod" ||
      { log "tools/go/${want%%:*}/go.mod does not require ${want#*:} (tools/versions.env): update one of them"; exit 1; }
  done
}

build_all() {
  verify_versions
  build etcd
  build kube
  build kwok
  build pulumi
  if [ ! -f "$(piece_dir pulumi-kubernetes)/.complete" ]; then
    (cd "$here/go/pulumi-kubernetes" && go run ./cmd/gen-embed "$PULUMI_KUBERNETES_VERSION" cmd/pulumi-resource-kubernetes)
  fi
  build pulumi-kubernetes
}

# assemble: one bin directory of symlinks, keyed by the pieces' keys, that the wrappers put on PATH.
assemble() {
  local pieces=(etcd kube kwok pulumi pulumi-kubernetes) sum="" p
  for p in "${pieces[@]}"; do sum+="$(key "$p")"; done
  local dir="$cache_root/bin-$(echo "$sum" | sha256sum | cut -c1-16)"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir.tmp.$$"
    for p in "${pieces[@]}"; do ln -sf "$(piece_dir "$p")"/bin/* "$dir.tmp.$$/"; done
    mv "$dir.tmp.$$" "$dir"
  fi
  echo "$dir"
}

complete() {
  local p
  for p in etcd kube kwok pulumi pulumi-kubernetes; do [ -f "$(piece_dir "$p")/.complete" ] || return 1; done
}

case "${1:-build}" in
  --bin-dir) if [ -n "${MYAPP_TOOLCHAIN_BIN:-}" ]; then echo "$MYAPP_TOOLCHAIN_BIN"; exit 0; fi
    complete || { echo "toolchain not built: run 'npm run toolchain'" >&2; exit 1; }; assemble ;;
  build) log "cache: $cache_root (Go $go_version)"; build_all; assemble; log "toolchain ready" ;;
  prune)
    keep=" $(for p in etcd kube kwok pulumi pulumi-kubernetes; do printf '%s ' "$(piece_dir "$p")"; done)$(complete && assemble) "
    for dir in "$cache_root"/*; do
      [[ "$keep" == *" $dir "* ]] || { log "removing $dir"; rm -rf "$dir"; }
    done ;;
  *) echo "usage: tools/toolchain.sh [build|--bin-dir|prune]" >&2; exit 2 ;;
esac
