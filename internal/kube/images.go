package kube

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Image locality. A node's status lists the images its container runtime
// holds, each under every name it has (tags and digests), with its size;
// a pod names its containers' images as written in its spec. Both are
// written in full before they are compared, as the runtime resolves
// them: "nginx" is docker.io/library/nginx:latest. The core puts a pod,
// among nodes it rates alike, where more bytes of its images already are
// (gang/images.go).

// imageRef writes an image reference in full: a registry (docker.io when
// the first part names none), library/ for Docker Hub's official images,
// and :latest when neither a tag nor a digest is given.
func imageRef(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return ""
	}
	first, rest, hasSlash := strings.Cut(name, "/")
	if !hasSlash || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		if !hasSlash {
			name = "library/" + name
		}
		name = "docker.io/" + name
	} else if first == "index.docker.io" {
		name = "docker.io/" + rest
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.ContainsAny(last, ":@") {
		name += ":latest"
	}
	return name
}

// nodeImages is what n's status says it holds: every name of every
// image, written in full, with the image's size.
func nodeImages(n *corev1.Node) map[string]int64 {
	if len(n.Status.Images) == 0 {
		return nil
	}
	out := map[string]int64{}
	for _, im := range n.Status.Images {
		for _, name := range im.Names {
			if ref := imageRef(name); ref != "" {
				out[ref] = im.SizeBytes
			}
		}
	}
	return out
}

// podImages lists the images pods run, init containers' too, each once,
// written in full.
func podImages(pods []*corev1.Pod) []string {
	var out []string
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			if ref := imageRef(c.Image); ref != "" && !slices.Contains(out, ref) {
				out = append(out, ref)
			}
		}
	}
	for _, p := range pods {
		add(p.Spec.InitContainers)
		add(p.Spec.Containers)
	}
	return out
}
