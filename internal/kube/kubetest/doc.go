// Package kubetest runs a real Kubernetes control plane for tests: etcd and
// kube-apiserver on loopback, with certificates made in Go, an admin token
// and the CRDs of deploy/crds applied. One control plane serves a whole test
// binary (start it from TestMain with Main); each test takes a namespace of
// its own and creates GPU nodes with the helpers in node.go.
//
// The binaries come from $CORRAL_KUBE_BIN or ~/.cache/corral/bin (built by
// scripts/deps/10-kube.sh). When they are missing, tests skip with a message
// saying how to get them, unless CORRAL_INTEGRATION=1, which makes them fail.
//
// It is used by tests and by the benchmark in bench/kube. Start reading at
// Main in cluster.go.
package kubetest
