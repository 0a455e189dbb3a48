//go:build tools

// Package tools pins the command build.sh builds from this module (the
// MPIJob controller, cmd/mpi-operator), so that go.mod and go.sum keep what
// it needs.
package tools

import (
	_ "github.com/kubeflow/mpi-operator/cmd/mpi-operator"
)
