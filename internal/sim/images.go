package sim

import (
	"maps"
	"time"
)

// ImagePull makes nodes pull the container images of the jobs placed
// on them before their tasks start (Options.ImagePull). A node keeps what
// it pulled: its disk is taken to hold every image (no kubelet image
// garbage collection). Among nodes the placement rates alike, jobs go
// where their images are (gang/images.go).
type ImagePull struct {
	BytesPerSecond float64          // how fast one node pulls
	Sizes          map[string]int64 // bytes pulled for each image; one not named is there at once
}

// PullSummary is what image pulls cost a replay.
type PullSummary struct {
	Starts       int     `json:"starts"`         // jobs started, restarts included
	Pulled       int     `json:"pulled"`         // of them, started after pulling on some node
	NodePulls    int     `json:"node_pulls"`     // images pulled, one per node and image
	MeanDelayMin float64 `json:"mean_delay_min"` // start delay of the jobs that pulled, mean
	MaxDelayMin  float64 `json:"max_delay_min"`
	// GangPulled and GangMeanDelayMin count the jobs of tasks on several
	// nodes: a gang starts once its slowest node has pulled.
	GangPulled       int     `json:"gang_pulled"`
	GangMeanDelayMin float64 `json:"gang_mean_delay_min"`
	GPUHours         float64 `json:"gpu_hours"` // GPUs held while their jobs' images were pulled
}

// pulls is the replay's image state: what it costs so far.
type pulls struct {
	opt       ImagePull
	sum       PullSummary
	delay     time.Duration // summed over jobs that pulled
	gangDelay time.Duration
}

// setUpImages gives each node of the replay an image set of its own
// (the fleet's, copied), so that pulls in one replay are not seen by
// another.
func (s *Sim) setUpImages() {
	if s.opt.ImagePull == nil {
		return
	}
	s.pulls = &pulls{opt: *s.opt.ImagePull}
	for i := range s.fleet.Nodes {
		s.fleet.Nodes[i].Images = maps.Clone(s.fleet.Nodes[i].Images)
		if s.fleet.Nodes[i].Images == nil {
			s.fleet.Nodes[i].Images = map[string]int64{}
		}
	}
}

// pull makes the nodes of a job's placements pull the images they lack
// and returns how long its start waits for them: the slowest node's pull.
func (s *Sim) pull(images []string, parts []string, gpus float64) time.Duration {
	if s.pulls == nil {
		return 0
	}
	ps := s.pulls
	ps.sum.Starts++
	nodes := map[int]bool{}
	for _, p := range s.placements(parts) {
		for _, t := range p.Tasks {
			nodes[t.Node] = true
		}
	}
	var slowest time.Duration
	pulledAny := false
	for n := range nodes {
		held := s.fleet.Nodes[n].Images
		var bytes int64
		for _, im := range images {
			if _, ok := held[im]; ok {
				continue
			}
			size := ps.opt.Sizes[im]
			held[im] = size
			bytes += size
			ps.sum.NodePulls++
			pulledAny = true
		}
		slowest = max(slowest, time.Duration(float64(bytes)/ps.opt.BytesPerSecond*float64(time.Second)))
	}
	if pulledAny {
		s.state.ImagesChanged()
	}
	if slowest == 0 {
		return 0
	}
	ps.sum.Pulled++
	ps.delay += slowest
	ps.sum.MaxDelayMin = max(ps.sum.MaxDelayMin, slowest.Minutes())
	ps.sum.GPUHours += gpus * slowest.Hours()
	if len(nodes) > 1 {
		ps.sum.GangPulled++
		ps.gangDelay += slowest
	}
	return slowest
}

// pullSummary is what pulls cost the replay, nil without image pulls.
func (s *Sim) pullSummary() *PullSummary {
	if s.pulls == nil {
		return nil
	}
	sum := s.pulls.sum
	if sum.Pulled > 0 {
		sum.MeanDelayMin = (s.pulls.delay / time.Duration(sum.Pulled)).Minutes()
	}
	if sum.GangPulled > 0 {
		sum.GangMeanDelayMin = (s.pulls.gangDelay / time.Duration(sum.GangPulled)).Minutes()
	}
	return &sum
}
