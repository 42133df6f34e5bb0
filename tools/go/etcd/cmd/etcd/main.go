// Command etcd runs the upstream etcd server; upstream's own main module has replaces, so it cannot be go-installed.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
