"""The Kubernetes-facing layer of flux-dws (official ``kubernetes`` client)."""
