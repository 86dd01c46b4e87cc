// Package upstream runs the Kubernetes scheduler framework's own plugins,
// from k8s.io/kubernetes at the cluster's version, against corral's view
// of a cluster: PreFilter and Filter decide on which nodes a pod may run
// (node affinity, taints, ports, unschedulable nodes, resources with
// overhead and pod count, volumes, inter-pod affinity, topology spread,
// dynamic resources), and Reserve and PreBind claim what a placed pod
// uses (ResourceClaim allocations, volume bindings). Where pods go among
// the nodes allowed is for corral's core to decide; this package only
// says which nodes are allowed.
//
// The plugins' cluster is kept from one cycle's view to the next in
// kube-scheduler's own cache and snapshot (keptCluster): each view tells
// the cache only the nodes and pods that came, changed or went, and the
// snapshot copies only the NodeInfos that changed, as kube-scheduler's
// does between its cycles. Pods placed in a view are taken out of the
// snapshot when the next view is made.
//
// The GPU, CPU and memory requests of a pod are left out of the checks
// (corral's core counts them, MIG and shared GPUs included, and frees them
// by preemption); every other resource (extended resources such as
// rdma/ib, ephemeral storage, the node's pod count) is checked here.
package upstream
