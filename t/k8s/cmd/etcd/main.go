// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 the
// way etcd's own main package builds it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
