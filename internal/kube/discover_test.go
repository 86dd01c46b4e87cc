package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// jobSetCRD is the JobSet CRD of testdata/crds.
const jobSetCRD = "jobsets.jobset.x-k8s.io"

// installJobSetCRD installs the JobSet CRD and waits until discovery
// shows it.
func (e *env) installJobSetCRD() {
	e.t.Helper()
	if err := e.c.ApplyCRDs(context.Background(), filepath.Join("testdata", "crds", "jobsets.yaml")); err != nil {
		e.t.Fatal(err)
	}
	e.eventually(func() error {
		if servedVersion(e.c.Client.Discovery(), JobSetResource.Group, JobSetResource.Resource, []string{JobSetResource.Version}) == "" {
			return fmt.Errorf("%s not discoverable yet", JobSetResource)
		}
		return nil
	})
}

// removeJobSetCRD deletes the JobSet CRD, if installed, and waits until
// it is gone and discovery no longer shows it.
func (e *env) removeJobSetCRD() {
	e.t.Helper()
	crds := e.c.Dynamic.Resource(crdResource)
	if err := crds.Delete(context.Background(), jobSetCRD, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatalf("deleting CRD %s: %v", jobSetCRD, err)
	}
	e.eventually(func() error {
		if _, err := crds.Get(context.Background(), jobSetCRD, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("CRD %s still there (%v)", jobSetCRD, err)
		}
		if servedVersion(e.c.Client.Discovery(), JobSetResource.Group, JobSetResource.Resource, []string{JobSetResource.Version}) != "" {
			return fmt.Errorf("%s still discoverable", JobSetResource)
		}
		return nil
	})
}

// A JobSet CRD installed after corral started is read without a restart:
// the JobSet's pods wait saying the CRD is not installed, then, once it
// is and the JobSet exists, as a gang of 4 (3 pods wait for the 4th)
// and bind whole. Once the CRD is removed, a JobSet's pod waits saying
// so again.
func TestJobSetCRDInstalledAfterStartIsRead(t *testing.T) {
	e := newEnv(t)
	e.removeJobSetCRD()
	t.Cleanup(e.installJobSetCRD) // as the other tests found it
	for i := range 4 {
		e.node(fmt.Sprintf("late-%d", i), 8, nil)
	}
	cfg := e.config()
	cfg.DiscoveryInterval = 200 * time.Millisecond
	e.start(cfg)

	var pods []*corev1.Pod
	var names []string
	for i := range 4 {
		p := pod(fmt.Sprintf("llm-workers-%d-%d", i/2, i%2), 8)
		p.Labels[LabelJobSetName] = "llm"
		pods, names = append(pods, p), append(names, p.Name)
	}
	e.create(pods[:3]...)
	e.waitUnschedulable(names[0], "the API server does not serve jobsets.jobset.x-k8s.io (v1alpha2): its CRD is not installed")
	e.noneBound(names...)

	e.installJobSetCRD()
	e.object(JobSetResource, "JobSet", "llm", map[string]any{"replicatedJobs": []any{
		map[string]any{"name": "workers", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{"parallelism": int64(2), "completions": int64(2)}}},
	}}, nil)
	e.waitUnschedulable(names[0], "pod group jobset:llm has 3 of its minMember 4 pods")
	e.noneBound(names...)
	e.create(pods[3])
	got := e.waitBound(names...)
	used := map[string]bool{}
	for _, n := range got {
		used[n] = true
	}
	if len(used) != 4 {
		t.Errorf("4 pods of 8 GPUs on %d nodes: %v", len(used), got)
	}

	e.removeJobSetCRD()
	later := pod("later-0", 0)
	later.Labels[LabelJobSetName] = "later"
	e.create(later)
	e.waitUnschedulable("later-0", "its CRD is not installed")
}
