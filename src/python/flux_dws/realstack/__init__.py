"""The real stack, started for tests and benchmarks: ``controlplane``, a
kube-apiserver and etcd built from Go modules (t/k8s/build.sh), with the
workload manager's user and roles; ``nnf``, the real DWS, nnf-sos and
nnf-dm managers built from ../shared/nnf (t/nnf/build.sh), with their
CRDs, webhooks and profiles.  Nothing of those projects is in this tree.
"""
