// Package peers replays a recorded workload (internal/workload) on a real
// Kubernetes control plane whose nodes are fake: etcd, kube-apiserver,
// kube-controller-manager (the Job controller) and KWOK, which runs each
// pod bound to one of its GPU nodes for the time its annotation gives and
// then completes it. Jobs arrive over compressed time (Options.Speedup
// simulated seconds per real second) under the upstream kube-scheduler
// configured to pack GPUs (with its own gang scheduling or without), under
// Kueue in front of it (with topology-aware scheduling or without), or
// under corral's Kubernetes scheduler (with reservations or without), on
// fake nodes in racks and blocks where asked (Fleet, NVL72), and what happened to each job comes back, from a
// watch on the API server, in the workload's own format: the same input
// and output as internal/sim, so that a model can be checked against the
// system it models (Compare in validate.go).
//
// The binaries come from $CORRAL_KUBE_BIN or ~/.cache/corral/bin
// (scripts/deps/10-kube.sh and 30-peers.sh). Start reading at Start in
// rig.go, then Replay in replay.go.
package peers
