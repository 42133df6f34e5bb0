#!/usr/bin/env bash
# npm run kubectl -- ARGS: the built kubectl against the local cluster (.local/kubeconfig).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(bash "$root/tools/toolchain.sh" --bin-dir)
export KUBECONFIG=${KUBECONFIG_OVERRIDE:-$root/.local/kubeconfig}
exec "$bin/kubectl" "$@"
