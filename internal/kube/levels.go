package kube

import (
	"fmt"
	"strings"
)

// Node labels of the topology that clusters publish themselves, which the
// default levels read without any relabelling.
const (
	// Kubernetes' well-known labels, set by the cloud provider's node
	// controller: https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesioregion
	// and #topologykubernetesiozone.
	LabelRegion = "topology.kubernetes.io/region"
	LabelZone   = "topology.kubernetes.io/zone"

	// EKS: a node's place in the EC2 network hierarchy, layer 1 the top
	// of it. Layer 3 is the bottom on most instance types; layer 4 exists
	// only on instance types whose topology has four layers (p6-b200,
	// p6-b300), and is the bottom there.
	// https://docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html
	// https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/how-ec2-instance-topology-works.html
	LabelEKSLayer1 = "topology.k8s.aws/network-node-layer-1"
	LabelEKSLayer2 = "topology.k8s.aws/network-node-layer-2"
	LabelEKSLayer3 = "topology.k8s.aws/network-node-layer-3"
	LabelEKSLayer4 = "topology.k8s.aws/network-node-layer-4"

	// GKE: the reserved block, its sub-block and the physical host of a
	// VM (A4X, A4, A3 Ultra, A3 Mega and A3 High nodes, and compact
	// placement); "the more label values two VMs share, the closer".
	// https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas
	// The host is not a default level: a GPU VM of those types fills its
	// host, so the host is the node, and a GB200 NVL72 clique spans 18 of
	// them (a host level would split it into domains of one node).
	LabelGKEBlock    = "cloud.google.com/gce-topology-block"
	LabelGKESubblock = "cloud.google.com/gce-topology-subblock"
	LabelGKEHost     = "cloud.google.com/gce-topology-host"

	// NVIDIA GPU feature discovery: the GPU fabric's ClusterUUID and
	// CliqueID of a node whose GPUs are on a multi-node NVLink fabric
	// (GB200 NVL72); nodes of one clique reach each other over NVLink.
	// EKS names it the NVLink domain of its P6e-GB200 UltraServers.
	// https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md
	// https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html
	LabelGPUClique = "nvidia.com/gpu.clique"

	// corral's own labels, the defaults before the clouds' were read;
	// still read where a cloud label is missing.
	LabelCorralBlock = "corral.sh/block"
	LabelCorralRack  = "corral.sh/rack"
)

// DefaultNVLinkLevel is the default levels' multi-node NVLink level.
const DefaultNVLinkLevel = "clique"

// DefaultLevels are the topology levels read when none are configured,
// outermost first. A cluster is on one cloud, so the clouds' labels share
// levels: block is EKS's layer 1 or GKE's block, subblock layer 2 or
// GKE's sub-block. rack is EKS's layer 3; leaf is EKS's bottom network
// node whatever the depth (layer 4 where there is one, else layer 3).
// clique, innermost, is the multi-node NVLink domain: a node without the
// label is one of its own (once any node has one). Innermost, a clique
// that spans several leaves is split (--print-topology warns of it); a
// pool of GB200 racks can name its own order with --topology-levels. AKS
// publishes no topology label finer than the zone (its proximity
// placement groups are per node pool, with no node label:
// https://learn.microsoft.com/azure/aks/reduce-latency-ppg).
func DefaultLevels() []Level {
	return []Level{
		{Name: "region", Labels: []string{LabelRegion}},
		{Name: "zone", Labels: []string{LabelZone}},
		{Name: "block", Labels: []string{LabelEKSLayer1, LabelGKEBlock, LabelCorralBlock}},
		{Name: "subblock", Labels: []string{LabelEKSLayer2, LabelGKESubblock}},
		{Name: "rack", Labels: []string{LabelEKSLayer3, LabelCorralRack}},
		{Name: "leaf", Labels: []string{LabelEKSLayer4, LabelEKSLayer3}},
		{Name: DefaultNVLinkLevel, Labels: []string{LabelGPUClique}},
	}
}

// ParseLevels reads "name=label|label,name=label", outermost first: each
// level's labels in the order they are tried.
func ParseLevels(s string) ([]Level, error) {
	var out []Level
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		name, list, ok := strings.Cut(field, "=")
		l := Level{Name: strings.TrimSpace(name)}
		for _, label := range strings.Split(list, "|") {
			if label = strings.TrimSpace(label); label != "" {
				l.Labels = append(l.Labels, label)
			}
		}
		if !ok || l.Name == "" || len(l.Labels) == 0 {
			return nil, fmt.Errorf("topology level %q: want name=label or name=label|label, for example rack=example.com/rack", field)
		}
		out = append(out, l)
	}
	return out, nil
}

// FormatLevels writes levels as ParseLevels reads them.
func FormatLevels(levels []Level) string {
	fields := make([]string, len(levels))
	for i, l := range levels {
		fields[i] = l.Name + "=" + strings.Join(l.Labels, "|")
	}
	return strings.Join(fields, ",")
}
