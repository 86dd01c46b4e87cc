package gang

import (
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/job"
)

// Image locality: among nodes and domains the placement rates alike, the
// ones holding more bytes of the job's container images come first, so
// its tasks start without pulling them (kube-scheduler's ImageLocality
// scores the same bytes, as one score among several; here it only breaks
// ties, so packing is never traded for a pull).

// images holds, while one job is placed, how many bytes of its images
// each node (byNode) and each domain (byVertex: the sum over its nodes)
// holds; on is false for a job without images, or when every node holds
// as many of them (there is no tie to break). They are kept for the next
// job running the same images (key) while no node's images change (gen).
type images struct {
	on, differ       bool
	byNode, byVertex []int64
	key              string
	gen              uint64
}

// ImagesChanged tells the state that some node's images
// (fleet.Node.Images) changed since it last read them.
func (s *State) ImagesChanged() { s.imagesGen++ }

// noteImages fills s.img for j.
func (s *State) noteImages(j *job.Job) {
	img := &s.img
	img.on = false
	if len(j.Images) == 0 {
		return
	}
	key := strings.Join(j.Images, "\x00")
	if img.byNode != nil && key == img.key && img.gen == s.imagesGen {
		img.on = img.differ
		return
	}
	if img.byNode == nil {
		img.byNode, img.byVertex = make([]int64, len(s.nodes)), make([]int64, len(s.tree.level))
	}
	img.key, img.gen, img.differ = key, s.imagesGen, false
	s.countImages(j.Images)
	for n := range img.byNode {
		if img.byNode[n] != img.byNode[0] {
			img.differ = true
			break
		}
	}
	img.on = img.differ
}

// countImages fills byNode and byVertex with the bytes of images each
// holds.
func (s *State) countImages(images []string) {
	img := &s.img
	clear(img.byVertex)
	for n := range s.fleet.Nodes {
		held := s.fleet.Nodes[n].Images
		var b int64
		for _, name := range images {
			b += held[name]
		}
		img.byNode[n] = b
		if b == 0 {
			continue
		}
		img.byVertex[0] += b
		for _, v := range s.tree.path[n] {
			img.byVertex[v] += b
		}
	}
}

// imageBytes is what ref r holds of the job's images.
func (s *State) imageBytes(r ref) int64 {
	if s.isNode(r) {
		return s.img.byNode[r.id]
	}
	return s.img.byVertex[r.id]
}

// withImages returns, among feasible nodes whose free resources are
// those of chosen (so the packing policy rates them alike), the one
// holding the most bytes of the job's images, the first in tree order
// on a tie; chosen when it holds as many as any.
func (s *State) withImages(chosen int, feasible []int) int {
	if !s.img.on {
		return chosen
	}
	best := chosen
	for _, n := range feasible {
		if s.img.byNode[n] > s.img.byNode[best] && s.sameFree(n, chosen) {
			best = n
		}
	}
	return best
}

// sameFree reports whether nodes a and b look alike to the packing
// policy: the same model and the same CPU, memory and GPU left.
func (s *State) sameFree(a, b int) bool {
	c := s.left
	return c.Nodes[a].Model == c.Nodes[b].Model && c.CPULeft[a] == c.CPULeft[b] && c.MemLeft[a] == c.MemLeft[b] &&
		slices.Equal(c.GPULeft[a], c.GPULeft[b]) && s.nodes[a].class == s.nodes[b].class
}
