package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"
)

// otherCRDs installs the minimal CRDs of Volcano, KAI, JobSet and
// LeaderWorkerSet in the test API server (before a scheduler starts, so
// that it reads them from its first cycle).
func (e *env) otherCRDs() {
	e.t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		e.t.Fatalf("no CRDs in testdata/crds: %v", err)
	}
	if err := e.c.ApplyCRDs(context.Background(), files...); err != nil {
		e.t.Fatal(err)
	}
	// Established is not yet discoverable: wait until discovery, which a
	// scheduler reads as it starts, shows each.
	for _, r := range []schema.GroupVersionResource{VolcanoPodGroupResource, KAIPodGroupResource, JobSetResource, ProvisioningRequestResource} {
		e.eventually(func() error {
			if servedVersion(e.c.Client.Discovery(), r.Group, r.Resource, []string{r.Version}) == "" {
				return fmt.Errorf("%s not discoverable yet", r)
			}
			return nil
		})
	}
}

// object creates a custom object of this test's namespace.
func (e *env) object(r schema.GroupVersionResource, kind, name string, spec map[string]any, ann map[string]string) *unstructured.Unstructured {
	e.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": r.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": e.ns},
		"spec":     spec,
	}}
	obj.SetAnnotations(ann)
	got, err := e.c.Dynamic.Resource(r).Namespace(e.ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("%s %s: %v", kind, name, err)
	}
	return got
}

func annotated(p *corev1.Pod, kv ...string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// noneBound fails the test if any named pod is bound.
func (e *env) noneBound(names ...string) {
	e.t.Helper()
	got := e.nodesOf()
	for _, n := range names {
		if got[n] != "" {
			e.t.Fatalf("pod %s bound to %s while its group is incomplete: %v", n, got[n], got)
		}
	}
}

// startsWhole creates the first pods of a group of three 8-GPU pods,
// checks that none starts, then the last, and checks that all start, each
// on its own node.
func (e *env) startsWhole(pods []*corev1.Pod, want string) {
	e.t.Helper()
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	e.create(pods[:len(pods)-1]...)
	msg := e.waitUnschedulable(names[0], want)
	e.t.Logf("%d of %d: %s", len(pods)-1, len(pods), msg)
	e.noneBound(names...)
	e.create(pods[len(pods)-1])
	got := e.waitBound(names...)
	used := map[string]bool{}
	for _, n := range got {
		used[n] = true
	}
	if len(used) < len(pods) {
		e.t.Errorf("%d pods of 8 GPUs on %d nodes: %v", len(pods), len(used), got)
	}
}

// Pods naming Volcano's PodGroup with the scheduling.k8s.io/group-name
// annotation, and KAI's with pod-group-name, are gangs of the PodGroup's
// minMember: none starts while two of three exist.
func TestVolcanoAndKAIGroupsStartWhole(t *testing.T) {
	e := newEnv(t)
	e.otherCRDs()
	for i := range 3 {
		e.node(fmt.Sprintf("vk-%d", i), 8, nil)
	}
	e.start(e.config())
	e.object(VolcanoPodGroupResource, "PodGroup", "vc", map[string]any{"minMember": int64(3)}, nil)
	var pods []*corev1.Pod
	for i := range 3 {
		pods = append(pods, annotated(pod(fmt.Sprintf("vc-%d", i), 8), AnnotationVolcanoGroup, "vc"))
	}
	e.startsWhole(pods, "minMember 3")
	// Its status, as Volcano's scheduler would keep it.
	e.eventually(func() error {
		obj, err := e.c.Dynamic.Resource(VolcanoPodGroupResource).Namespace(e.ns).Get(context.Background(), "vc", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "Running" {
			return fmt.Errorf("volcano pod group vc: status %v, want phase Running", obj.Object["status"])
		}
		return nil
	})

	// KAI's group, once Volcano's has the nodes: it waits whole for them.
	e.object(KAIPodGroupResource, "PodGroup", "kai", map[string]any{"minMember": int64(2)}, nil)
	e.create(annotated(pod("kai-0", 8), AnnotationKAIGroup, "kai"))
	e.waitUnschedulable("kai-0", "minMember 2")
	e.create(annotated(pod("kai-1", 8), AnnotationKAIGroup, "kai"))
	e.waitUnschedulable("kai-1", "GPU")
	e.noneBound("kai-0", "kai-1")
	e.node("vk-3", 8, nil) // room for one of its two pods: still none starts
	e.waitUnschedulable("kai-1", "room for 8 GPUs")
	e.noneBound("kai-0", "kai-1")
	e.node("vk-4", 8, nil)
	e.waitBound("kai-0", "kai-1")
	// A pod naming a Volcano group that does not exist waits, saying so.
	e.create(annotated(pod("lost", 1), AnnotationVolcanoGroup, "nosuch"))
	e.waitUnschedulable("lost", "scheduling.volcano.sh")
}

// The Workload API's PodGroup at the version the API server serves
// (v1beta1 on 1.37): a gang of minCount, packed into one domain of its
// topology constraint's key.
func TestWorkloadAPIPodGroupV1beta1(t *testing.T) {
	e := newEnv(t)
	if v := servedVersion(e.c.Client.Discovery(), "scheduling.k8s.io", "podgroups", NativePodGroupVersions); v != "v1beta1" {
		t.Fatalf("API server serves PodGroups at %q, want v1beta1", v)
	}
	// Rack a: one node; rack b: three. A gang of three packed by rack
	// can only start in b.
	e.node("wl-a0", 8, map[string]string{"corral.test/rack": "a"})
	for i := range 3 {
		e.node(fmt.Sprintf("wl-b%d", i), 8, map[string]string{"corral.test/rack": "b"})
	}
	e.start(e.config())
	e.nativeGroup("ring", "v1beta1", 3, "corral.test/rack")
	var pods []*corev1.Pod
	for i := range 3 {
		pods = append(pods, inNativeGroup(pod(fmt.Sprintf("ring-%d", i), 8), "ring"))
	}
	e.startsWhole(pods, "minCount 3")
	for p, n := range e.nodesOf() {
		if n == "wl-a0" {
			t.Errorf("pod %s on wl-a0, outside the rack the others share", p)
		}
	}
	// Its status: scheduled, as the upstream scheduler says it.
	e.eventually(func() error {
		obj, err := e.c.Dynamic.Resource(NativePodGroupResource).Namespace(e.ns).Get(context.Background(), "ring", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == ConditionInitiallyScheduled && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("pod group ring: conditions %v, want %s True", conds, ConditionInitiallyScheduled)
	})
	// The basic policy is no gang: of two pods, the one that fits starts.
	e.nativeGroup("loose", "v1beta1", 0)
	e.create(inNativeGroup(pod("loose-0", 8), "loose"), inNativeGroup(pod("loose-1", 8), "loose"))
	e.waitBound("loose-0")
	e.waitUnschedulable("loose-1", "GPU")
	// A topology key that is no level of corral's: the group waits, saying
	// why.
	e.nativeGroup("odd", "v1beta1", 1, "example.com/pod")
	e.create(inNativeGroup(pod("odd-0", 1), "odd"))
	e.waitUnschedulable("odd-0", "example.com/pod")
}

// servedVersion picks v1beta1 where served, v1alpha3 where only it is, and
// none where neither is.
func TestServedVersionFallsBack(t *testing.T) {
	for _, tc := range []struct {
		served []string
		want   string
	}{
		{[]string{"v1alpha3", "v1beta1"}, "v1beta1"},
		{[]string{"v1alpha3"}, "v1alpha3"},
		{nil, ""},
	} {
		d := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{}}
		for _, v := range tc.served {
			d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "scheduling.k8s.io/" + v,
				APIResources: []metav1.APIResource{{Name: "podgroups"}, {Name: "workloads"}}})
		}
		if got := servedVersion(d, "scheduling.k8s.io", "podgroups", NativePodGroupVersions); got != tc.want {
			t.Errorf("served %v: got %q, want %q", tc.served, got, tc.want)
		}
	}
}

// jobPod is a pod as the Job controller makes it for index i of job.
func jobPod(j *batchv1.Job, i, gpus int) *corev1.Pod {
	p := pod(fmt.Sprintf("%s-%d", j.Name, i), gpus)
	p.Labels[batchv1.JobNameLabel] = j.Name
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
	return annotated(p, AnnotationJobIndex, fmt.Sprint(i))
}

// indexedJob creates an indexed Job of n pods for corral, parallelism =
// completions = n: a gang inferred from its owner.
func (e *env) indexedJob(name string, n int32) *batchv1.Job {
	e.t.Helper()
	indexed := batchv1.IndexedCompletion
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Parallelism: &n, Completions: &n, CompletionMode: &indexed,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, SchedulerName: DefaultSchedulerName,
				Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/train:1"}}}}},
	}
	j, err := e.c.Client.BatchV1().Jobs(e.ns).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// An indexed Job whose parallelism equals its completions is a gang of
// parallelism pods, with no PodGroup written. (No Job controller runs
// here: the test makes the pods as it would.)
func TestIndexedJobStartsWhole(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.node(fmt.Sprintf("job-%d", i), 8, nil)
	}
	e.start(e.config())
	j := e.indexedJob("train", 3)
	e.startsWhole([]*corev1.Pod{jobPod(j, 0, 8), jobPod(j, 1, 8), jobPod(j, 2, 8)}, "minMember 3")
}

// A JobSet's pods are one gang (replicas times parallelism of each
// replicated Job), and each group of a LeaderWorkerSet one gang of its
// size. (No JobSet or LeaderWorkerSet controller runs here: the test
// makes the pods as they would.)
func TestJobSetAndLeaderWorkerSetStartWhole(t *testing.T) {
	e := newEnv(t)
	e.otherCRDs()
	for i := range 5 { // four for the JobSet, one for the LeaderWorkerSet
		e.node(fmt.Sprintf("js-%d", i), 8, nil)
	}
	e.start(e.config())
	e.object(JobSetResource, "JobSet", "pt", map[string]any{"replicatedJobs": []any{
		map[string]any{"name": "workers", "replicas": int64(2), "template": map[string]any{"spec": map[string]any{"parallelism": int64(2), "completions": int64(2)}}},
	}}, nil)
	var pods []*corev1.Pod
	for i := range 4 {
		p := pod(fmt.Sprintf("pt-workers-%d-%d", i/2, i%2), 8)
		p.Labels[LabelJobSetName] = "pt"
		pods = append(pods, p)
	}
	e.startsWhole(pods, "minMember 4")

	lws := schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
	e.object(lws, "LeaderWorkerSet", "serve", map[string]any{"replicas": int64(1), "leaderWorkerTemplate": map[string]any{"size": int64(2)}}, nil)
	var group []*corev1.Pod
	for i, name := range []string{"serve-0", "serve-0-1"} {
		p := annotated(pod(name, 1), AnnotationLWSSize, "2")
		p.Labels[LabelLWSName], p.Labels[LabelLWSGroupIndex] = "serve", "0"
		p.Labels["leaderworkerset.sigs.k8s.io/worker-index"] = fmt.Sprint(i)
		group = append(group, p)
	}
	e.create(group[0])
	e.waitUnschedulable("serve-0", "minMember 2")
	e.noneBound("serve-0")
	e.create(group[1])
	e.waitBound("serve-0", "serve-0-1")
}

// jobGroup: which Jobs are gangs, and of how many pods.
func TestJobGroup(t *testing.T) {
	indexed, nonIndexed := batchv1.IndexedCompletion, batchv1.NonIndexedCompletion
	n := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		name       string
		mode       *batchv1.CompletionMode
		par, comp  *int32
		succeeded  int32
		wantMember int
	}{
		{"indexed, parallelism = completions", &indexed, n(4), n(4), 0, 4},
		{"two indexes done: the rest is the gang", &indexed, n(4), n(4), 2, 2},
		{"more completions than parallelism: as they fit", &indexed, n(2), n(8), 0, 1},
		{"not indexed", &nonIndexed, n(4), n(4), 0, 1},
		{"defaults", nil, nil, nil, 0, 1},
	} {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"},
			Spec:   batchv1.JobSpec{CompletionMode: tc.mode, Parallelism: tc.par, Completions: tc.comp},
			Status: batchv1.JobStatus{Succeeded: tc.succeeded}}
		if g := jobGroup(j); g.MinMember != tc.wantMember || g.key() != "ns/job:j" {
			t.Errorf("%s: group %s of %d, want ns/job:j of %d", tc.name, g.key(), g.MinMember, tc.wantMember)
		}
	}
}

// groupOf: which group each kind of pod is in, explicit groups first.
func TestGroupOf(t *testing.T) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", UID: "u1"}}
	owned := func(p *corev1.Pod) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
		return p
	}
	lws := pod("serve-0", 1)
	lws.Labels[LabelLWSName], lws.Labels[LabelLWSGroupIndex] = "serve", "2"
	js := pod("pt-0", 1)
	js.Labels[LabelJobSetName] = "pt"
	for _, tc := range []struct {
		pod        *corev1.Pod
		name, kind string
	}{
		{pod("alone", 1), "", ""},
		{inGroup(pod("a", 1), "pg"), "pg", KindCoscheduling},
		{inNativeGroup(pod("b", 1), "ring"), "ring", KindNative},
		{annotated(pod("c", 1), AnnotationVolcanoGroup, "vc"), "vc", KindVolcano},
		{annotated(pod("d", 1), AnnotationVolcanoGroupNew, "vc2"), "vc2", KindVolcano},
		{annotated(pod("e", 1), AnnotationKAIGroup, "kai"), "kai", KindKAI},
		{annotated(lws, AnnotationLWSSize, "4"), "lws:serve:2", KindLWS},
		{js, "jobset:pt", KindJobSet},
		{annotated(owned(pod("train-0", 1)), AnnotationJobIndex, "0"), "job:train", KindJob},
		{owned(pod("train-x", 1)), "", ""}, // not indexed: no group
		{inGroup(annotated(owned(pod("train-1", 1)), AnnotationJobIndex, "1"), "pg"), "pg", KindCoscheduling},
	} {
		if name, kind := groupOf(tc.pod); name != tc.name || kind != tc.kind {
			t.Errorf("%s: group %q (%s), want %q (%s)", tc.pod.Name, name, kind, tc.name, tc.kind)
		}
	}
}
