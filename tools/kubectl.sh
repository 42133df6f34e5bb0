#!/usr/bin/env bash
# npm run kubectl -- ARGS: the built kubectl against the local cluster (.local/kubeconfig). npm runs a script from
# the repository's root; kubectl runs where npm was started (INIT_CWD), so `-f ./file.yaml` means what it says.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(bash "$root/tools/toolchain.sh" --bin-dir)
export KUBECONFIG=${KUBECONFIG_OVERRIDE:-$root/.local/kubeconfig}
# Without it kubectl would try localhost:8080, which may well be an operator's metrics port.
if [ ! -f "$KUBECONFIG" ]; then
  echo "kubectl: the local cluster is not up ($KUBECONFIG does not exist): npm run cluster -- up, or npm start" >&2
  exit 1
fi
cd "${INIT_CWD:-$PWD}"
exec "$bin/kubectl" "$@"
