package workload

import "fmt"

// Image sizes by class of work, in bytes pulled (compressed layers): the
// assumption AssignImages makes for a workload whose jobs name no image.
// NVIDIA's PyTorch container (nvcr.io/nvidia/pytorch) is about 10 GiB to
// pull; a serving image a little less; a notebook image about half.
var ImageSizes = map[string]int64{
	Training:   10 << 30,
	FineTuning: 10 << 30,
	Inference:  8 << 30,
	Notebook:   5 << 30,
	Openb:      5 << 30,
}

// AssignImages gives every job of w that runs no image its tenant's
// image for its class (registry.local/TENANT/CLASS:v1), and returns the
// size of each image so named (ImageSizes).
func AssignImages(w *Workload) map[string]int64 {
	sizes := map[string]int64{}
	for _, a := range w.Arrivals {
		if len(a.Job.Images) > 0 {
			continue
		}
		class := a.Class
		if _, ok := ImageSizes[class]; !ok {
			class = Training
		}
		name := fmt.Sprintf("registry.local/%s/%s:v1", tenantName(a.Job.Tenant), class)
		a.Job.Images = []string{name}
		sizes[name] = ImageSizes[class]
	}
	return sizes
}

func tenantName(t string) string {
	if t == "" {
		return "default"
	}
	return t
}
