module rehearse-harness

// Builds use one modfile per Kubernetes minor: go build -modfile=k8s/<minor>/go.mod (see versions.json).
go 1.24
