#!/usr/bin/env bash
# Builds the offline toolchain from the Go module proxy into a cache outside the repo, one directory per piece,
# keyed by everything that went into it; a piece already in the cache is skipped.
#
#   tools/toolchain.sh [build]        build the default pieces that are missing, then print the bin directory
#   tools/toolchain.sh build PIECE..  build these pieces (optional ones too, e.g. controller-peer); prints each bin dir
#   tools/toolchain.sh --bin-dir      print the bin directory if the default pieces are built (exit 1 otherwise)
#   tools/toolchain.sh bin-dir PIECE  print one piece's bin directory if it is built (exit 1 otherwise)
#   tools/toolchain.sh prune          remove cached pieces that the current versions no longer use
#   tools/toolchain.sh check          check that Go is there and new enough
# The single steps, for tests of the cold path and for debugging:
#   tools/toolchain.sh key PIECE | download PIECE | gen-embed [OUTDIR] | assemble | pieces
#
# One build at a time per cache: a second build (another terminal, another checkout) waits for the lock and says
# who holds it. Each step of a build prints a progress line every 30 s (MYAPP_PROGRESS_SECONDS).
# MYAPP_CACHE_DIR moves the cache; MYAPP_TOOLCHAIN_BIN=/dir uses binaries you bring (same names).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/versions.env
source "$here/versions.env"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
cache_root=${MYAPP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/myapp-platform}/toolchain
lock_file=$cache_root/.lock
holder_file=$cache_root/.lock.holder
started=$(date +%s)

# Pieces `npm start` and `npm test` need; optional ones (benchmark peers) are built only when named (`build controller-peer`).
default_pieces=(etcd kube kwok pulumi pulumi-kubernetes helm)
optional_pieces=(controller-peer helm-operator)

log() { printf '[toolchain %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { log "$*"; exit 1; }

# The newest `go` directive of the wrapper modules is the Go this toolchain needs (GOTOOLCHAIN=local: no switching).
min_go() { grep -h '^go ' "$here"/go/*/go.mod | awk '{print $2}' | sort -V | tail -n 1; }
check_go() {
  command -v flock >/dev/null || die "flock is not installed: it comes with util-linux (apt-get install util-linux)."
  local need; need=$(min_go)
  command -v go >/dev/null ||
    die "Go is not installed. The toolchain is built from source and needs Go >= $need: install it from https://go.dev/dl/ (or your package manager), put 'go' on PATH, then run this again."
  go_version=$(go env GOVERSION)
  local have=${go_version#go}
  [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" = "$need" ] ||
    die "Go $have is too old: the toolchain needs Go >= $need (tools/go/*/go.mod). Install a newer Go from https://go.dev/dl/ and run this again."
}
go_version() { echo "${go_version:?check_go runs first}"; }

is_piece() { local p; for p in "${default_pieces[@]}" "${optional_pieces[@]}"; do [ "$p" != "$1" ] || return 0; done; return 1; }
need_piece() {
  is_piece "$1" || die "unknown piece '$1': one of ${default_pieces[*]} ${optional_pieces[*]}"
  [ -f "$here/go/$1/go.mod" ] || die "piece $1: tools/go/$1/go.mod does not exist in this checkout"
}

# Build flags, tags and packages of each piece: its recipe, part of its cache key.
tags=osusergo,grpcnotrace
recipe() {
  case "$1" in
    etcd) echo "|./cmd/etcd" ;;
    kube) echo "$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl" ;;
    kwok) echo "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${KUBE_VERSION#v}|sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl" ;;
    pulumi) echo "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION -X main.version=${PULUMI_VERSION#v}|github.com/pulumi/pulumi/pkg/v3/cmd/pulumi ./cmd/pulumi-language-nodejs" ;;
    pulumi-kubernetes) echo "-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$PULUMI_KUBERNETES_VERSION|./cmd/pulumi-resource-kubernetes" ;;
    helm) echo "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION|helm.sh/helm/v4/cmd/helm" ;;
    controller-peer) echo "|./cmd/controller-peer" ;;
    # Pinned by its go.mod only (not versions.env, whose every line is in every piece's key): a benchmark peer.
    helm-operator) echo "|github.com/operator-framework/helm-operator-plugins" ;;
  esac
}

kube_ldflags() {
  local v=$KUBE_VERSION minor; minor=$(echo "$v" | cut -d. -f2)
  local f=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    f+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$f"
}

# key PIECE: hash of the wrapper module (go.mod, go.sum, our sources), the Go version, the pinned versions and
# the piece's recipe, so any change to what goes into a piece gives it a new cache directory. It reads only this
# checkout: no cache is consulted, so it is the same on a fresh machine.
key() {
  local dir="$here/go/$1"
  { echo "$(go_version) $tags"; recipe "$1"; cat "$here/versions.env"
    find "$dir" -name '*.go' -o -name 'go.mod' -o -name 'go.sum' -o -name '*.patch' | sort | xargs cat
    [ "$1" != pulumi ] || cat "$here"/../pulumi-plugin/pulumi-*
  } | sha256sum | cut -c1-16
}

piece_dir() { echo "$cache_root/$1-$(key "$1")"; }
built() { [ -f "$(piece_dir "$1")/.complete" ]; }

packages() { local r; r=$(recipe "$1"); echo "${r#*|}"; }

# download PIECE: fetch every module the piece's packages need (into GOMODCACHE) and print how many packages the
# build compiles in all, its measure of progress. `go list -deps` loads exactly the build's package graph.
download() {
  local pkgs; read -r -a pkgs <<<"$(packages "$1")"
  (exec 9>&-; cd "$here/go/$1" && go list -tags "$tags" -deps "${pkgs[@]}") | wc -l
}

# gen-embed [OUTDIR]: the provider's embed files, generated from its module (downloaded first if missing).
gen_embed() {
  local out=${1:-$here/go/pulumi-kubernetes/cmd/pulumi-resource-kubernetes}
  (exec 9>&-; cd "$here/go/pulumi-kubernetes" && go run ./cmd/gen-embed "$PULUMI_KUBERNETES_VERSION" "$out")
}

# patched PIECE DIR: when the piece has patches (tools/go/PIECE/patches/*.patch, each naming its module in a
# "# module: PATH" line), a copy of each patched module under DIR with the patch applied, and a copy of the
# piece's go.mod that replaces the module by that copy; prints that go.mod's path for `go build -modfile`, or
# nothing without patches. (Go refuses -overlay for files in the module cache.) The module cache stays untouched,
# and we commit only our diff, never upstream's files.
patched() {
  local piece=$1 dir=$2 patch mod src copy replaces=()
  for patch in "$here/go/$piece/patches/"*.patch; do
    [ -f "$patch" ] || continue
    mod=$(sed -n 's/^# module: //p' "$patch" | head -n 1)
    [ -n "$mod" ] || die "$patch: no '# module: PATH' line"
    src=$(exec 9>&-; cd "$here/go/$piece" && go list -m -f '{{.Dir}}' "$mod")
    [ -d "$src" ] || die "$patch: module $mod is not in the module cache"
    copy="$dir/$mod"
    if [ ! -d "$copy" ]; then
      mkdir -p "$copy"; cp -R "$src/." "$copy/"; chmod -R u+w "$copy"
      replaces+=("-replace=$mod=$copy")
    fi
    (cd "$copy" && patch -p1 --quiet --no-backup-if-mismatch <"$patch" >&2) ||
      die "$patch does not apply to $mod: update the patch with the version in tools/versions.env"
  done
  [ ${#replaces[@]} -gt 0 ] || return 0
  cp "$here/go/$piece/go.mod" "$dir/go.mod"; cp "$here/go/$piece/go.sum" "$dir/go.sum"
  (exec 9>&-; cd "$here/go/$piece" && go mod edit -modfile="$dir/go.mod" "${replaces[@]}")
  echo "$dir/go.mod"
}

# Who holds the cache lock: "pid N (building PIECE for Ns, checkout DIR)"; empty when nobody does.
lock_holder() {
  [ -f "$lock_file" ] || return 0
  if (exec 8<"$lock_file"; flock -n 8); then return 0; fi # the lock is free: any holder file is stale
  local pid piece since dir
  read -r pid piece since dir <"$holder_file" 2>/dev/null || { echo "another process (starting)"; return 0; }
  echo "pid $pid (building $piece for $(( $(date +%s) - since ))s, checkout $dir)"
}

# take_lock: one build per cache at a time; waits (and says for whom, every 30 s) while another build runs.
take_lock() {
  mkdir -p "$cache_root"
  exec 9>>"$lock_file"
  if ! flock -n 9; then
    log "waiting for the build already running in this cache: $(lock_holder)"
    until flock -w 30 9; do log "still waiting: $(lock_holder)"; done
    log "lock acquired; pieces that build made are used as they are"
  fi
  trap 'rm -f "$holder_file"' EXIT
}
holding() { echo "$$ $1 $(date +%s) $(cd "$here/.." && pwd)" >"$holder_file"; }

# start_ticker T0 DESCRIBE: a progress line every 30 s, DESCRIBE's output given the elapsed seconds, until
# stop_ticker. (Its `sleep` is killed with it, and it does not hold the cache lock's descriptor.)
start_ticker() {
  local t0=$1 describe=$2
  ( exec 9>&-; trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do sleep "${MYAPP_PROGRESS_SECONDS:-30}" & nap=$!; wait "$nap"; log "$("$describe" "$(( $(date +%s) - t0 ))")"; done ) &
  ticker=$!
}
stop_ticker() { kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true; }

# build PIECE: download its modules, generate what it needs, go build its recipe into the piece's cache directory,
# atomically (tmp dir, then rename); a progress line every 30 s of each step (for the compile: packages compiled
# of the build's total).
build() {
  local piece=$1 r; r=$(recipe "$1")
  local ldflags=${r%%|*} pkgs; read -r -a pkgs <<<"${r#*|}"
  local out; out=$(piece_dir "$piece")
  if [ -f "$out/.complete" ]; then log "$piece: cached ($out)"; return; fi
  holding "$piece"
  local tmp="$out.tmp.$$" t0 total rc=0; t0=$(date +%s)
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  describe_download() { echo "$piece: downloading modules, ${1}s"; }
  describe_compile() {
    echo "$piece: compiling, ${1}s, $(grep -c -v -e '^#' -e ' ' "$tmp/build.log")/$total packages compiled"
  }

  # The provider's main package embeds generated files: they must exist before `go list` can load it (a fresh
  # clone has none; gen-embed downloads the provider module it reads them from).
  if [ "$piece" = pulumi-kubernetes ]; then log "$piece: generating the embed files"; gen_embed; fi
  log "$piece: downloading modules"
  start_ticker "$t0" describe_download
  download "$piece" >"$tmp/packages" 2>"$tmp/build.log" || rc=$?
  stop_ticker
  if [ "$rc" != 0 ]; then
    tail -n 30 "$tmp/build.log" >&2
    die "FAILED: $piece: module download. Full log: $tmp/build.log. Is the Go module proxy reachable ('go env GOPROXY')?"
  fi
  total=$(cat "$tmp/packages")
  local modfile; modfile=$(patched "$piece" "$tmp/patched") || exit 1
  [ -z "$modfile" ] || log "$piece: patched: $(cd "$here/go/$piece/patches" && echo *.patch)"

  log "$piece: compiling ${pkgs[*]} ($total packages, those in Go's build cache are not compiled again; a cold build takes minutes)"
  start_ticker "$t0" describe_compile
  ( exec 9>&-; cd "$here/go/$piece" && exec go build -v -trimpath -tags "$tags" ${modfile:+-modfile "$modfile"} -ldflags "-s -w $ldflags" -o "$tmp/bin/" "${pkgs[@]}" ) \
    >"$tmp/build.log" 2>&1 || rc=$?
  stop_ticker
  if [ "$rc" != 0 ]; then
    grep -e '^#' -e ' ' "$tmp/build.log" | tail -n 30 >&2 || true
    die "FAILED: $piece (${pkgs[*]}). Full log: $tmp/build.log. 'go clean -cache' if Go's cache is corrupt; then npm run toolchain again."
  fi
  # pulumi finds its bundled plugins next to its own (resolved) binary: the dynamic-provider launcher and its
  # preload go there (the package ships the same files as a project plugin: pulumi-plugin/).
  [ "$piece" != pulumi ] || cp "$here"/../pulumi-plugin/pulumi-* "$tmp/bin/"
  # helm-operator-plugins' main package is its module root: go names the binary after the module, not the command.
  [ "$piece" != helm-operator ] || mv "$tmp/bin/helm-operator-plugins" "$tmp/bin/helm-operator"
  touch "$tmp/.complete"; rm -rf "$out"; mv -T "$tmp" "$out"
  log "$piece: built in $(( $(date +%s) - t0 ))s -> $out/bin"
}

# The wrapper modules must pin what versions.env says, or the cache key would lie.
verify_versions() {
  local want
  for want in "kube:k8s.io/kubernetes $KUBE_VERSION" "etcd:go.etcd.io/etcd/server/v3 $ETCD_VERSION" \
      "kwok:sigs.k8s.io/kwok $KWOK_VERSION" "pulumi:github.com/pulumi/pulumi/pkg/v3 $PULUMI_VERSION" \
      "pulumi-kubernetes:github.com/pulumi/pulumi-kubernetes/sdk/v4 v$PULUMI_KUBERNETES_VERSION" \
      "helm:helm.sh/helm/v4 $HELM_VERSION"; do
    grep -q "${want#*:}" "$here/go/${want%%:*}/go.mod" ||
      die "tools/go/${want%%:*}/go.mod does not require ${want#*:} (tools/versions.env): update one of them"
  done
}

# assemble: one bin directory of symlinks to the default pieces, keyed by their keys, that the wrappers put on PATH.
assemble() {
  local sum="" p
  for p in "${default_pieces[@]}"; do built "$p" || die "assemble: $p is not built"; sum+="$(key "$p")"; done
  local dir; dir="$cache_root/bin-$(echo "$sum" | sha256sum | cut -c1-16)"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir.tmp.$$"
    for p in "${default_pieces[@]}"; do ln -sf "$(piece_dir "$p")"/bin/* "$dir.tmp.$$/"; done
    mv -T "$dir.tmp.$$" "$dir" 2>/dev/null || rm -rf "$dir.tmp.$$" # someone else assembled it meanwhile
  fi
  echo "$dir"
}

complete() { local p; for p in "${default_pieces[@]}"; do built "$p" || return 1; done; }

not_built() {
  local holder; holder=$(lock_holder)
  if [ -n "$holder" ]; then
    echo "toolchain not built yet: a build is in progress, $holder. 'npm run toolchain' waits for it." >&2
  else
    echo "toolchain not built: run 'npm run toolchain' (a cold build takes a while)" >&2
  fi
  exit 1
}

# prune: under the lock (no build of this cache is running), remove what no pinned version uses; a *.tmp.PID
# directory whose process still runs is never touched.
prune() {
  take_lock
  local keep=" " p dir pid
  for p in "${default_pieces[@]}" "${optional_pieces[@]}"; do
    [ ! -f "$here/go/$p/go.mod" ] || keep+="$(piece_dir "$p") "
  done
  ! complete || keep+="$(assemble) "
  for dir in "$cache_root"/*; do
    [ -e "$dir" ] || continue
    [[ "$keep" != *" $dir "* ]] || continue
    pid=${dir##*.tmp.}
    if [[ "$dir" == *.tmp.* && "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      log "keeping $dir (in progress, pid $pid)"; continue
    fi
    log "removing $dir"; rm -rf "$dir"
  done
}

cmd=${1:-build}; [ $# -eq 0 ] || shift
case "$cmd" in
  --bin-dir) if [ -n "${MYAPP_TOOLCHAIN_BIN:-}" ]; then echo "$MYAPP_TOOLCHAIN_BIN"; exit 0; fi
    check_go; complete || not_built; assemble ;;
  bin-dir) [ $# -eq 1 ] || die "usage: tools/toolchain.sh bin-dir PIECE"; check_go; need_piece "$1"
    built "$1" || { echo "piece $1 not built: run 'bash tools/toolchain.sh build $1'" >&2; exit 1; }
    echo "$(piece_dir "$1")/bin" ;;
  build) check_go; verify_versions
    pieces=("$@"); [ $# -gt 0 ] || pieces=("${default_pieces[@]}")
    for p in "${pieces[@]}"; do need_piece "$p"; done
    log "cache: $cache_root (Go $(go_version))"
    missing=(); for p in "${pieces[@]}"; do built "$p" || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then take_lock; for p in "${pieces[@]}"; do build "$p"; done; fi
    if [ $# -eq 0 ]; then assemble; log "toolchain ready"
    else for p in "${pieces[@]}"; do echo "$(piece_dir "$p")/bin"; done; fi ;;
  prune) check_go; prune ;;
  check) check_go; log "Go $(go_version) (needs >= $(min_go))" ;;
  key) check_go; need_piece "${1:-}"; key "$1" ;;
  download) check_go; need_piece "${1:-}"; download "$1" ;;
  gen-embed) check_go; gen_embed "$@" ;;
  assemble) check_go; complete || not_built; assemble ;;
  pieces) echo "default: ${default_pieces[*]}"; echo "optional: ${optional_pieces[*]}" ;;
  *) echo "usage: tools/toolchain.sh [build [PIECE...]|--bin-dir|bin-dir PIECE|prune|check|key PIECE|download PIECE|gen-embed [OUTDIR]|assemble|pieces]" >&2; exit 2 ;;
esac
