package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// result is one scheduler's run.
type result struct {
	Scheduler     string  `json:"scheduler"`
	Pods          int     `json:"pods"`
	PodsBound     int     `json:"podsBound"`
	GPUsBound     int64   `json:"gpusBound"`
	GPUsFree      int64   `json:"gpusFree"`
	Seconds       float64 `json:"seconds"`       // from the first pod's creation to the last binding
	CreateSeconds float64 `json:"createSeconds"` // creating every pod took this long
	PodsPerSecond float64 `json:"podsPerSecond"`
	NodesUsed     int     `json:"nodesUsed"`
	// GPUsStranded are the free GPUs of nodes in partial use: a pod that
	// needs a whole node cannot have them. GPUsFree counts every free GPU.
	GPUsStranded int `json:"gpusStranded"`
	GangsWhole   int `json:"gangsWhole"`
	GangsPartial int `json:"gangsPartial"` // some pods bound, fewer than minMember
	GangsNone    int `json:"gangsNone"`
	// With -replicas: the fractional pods bound, the GPU they asked for
	// and the GPU their replicas come to (thousandths), and the GPUs they
	// occupy: on each node with time-sliced GPUs, its replicas in use
	// packed onto the fewest GPUs (which GPU each replica is, the device
	// plugin decides; this counts the best it can do, for every scheduler
	// alike). With -dra: the GPU memory their claims were allocated, and
	// the devices with any of it allocated, as the claims say. GPUsFree and
	// GPUsStranded count those GPUs as used.
	SharesBound        int   `json:"sharesBound,omitempty"`
	ShareMilliAsked    int64 `json:"shareMilliAsked,omitempty"`
	ShareMilliGiven    int64 `json:"shareMilliGiven,omitempty"`
	SharedGPUsOccupied int64 `json:"sharedGPUsOccupied,omitempty"`
}

func runOne(ctx context.Context, c *kubetest.Cluster, dir, name string, w *workload, o options) (result, error) {
	ns := "bench-" + name
	if err := makeNamespace(ctx, c, ns); err != nil {
		return result{}, err
	}
	schedulerName := name
	switch name {
	case "kube-scheduler", "kube-packed":
		schedulerName = "default-scheduler"
	case "corral":
		schedulerName = kube.DefaultSchedulerName
	}
	var stop func()
	var start time.Time
	var created time.Duration
	var err error
	if o.drain || name == ceiling {
		// Drain: every pod exists before the scheduler starts; the clock
		// starts with it. The ceiling only drains.
		start = time.Now()
		if err := createWork(ctx, c, ns, schedulerName, w); err != nil {
			return result{}, fmt.Errorf("creating pods: %w", err)
		}
		created = time.Since(start)
		start = time.Now()
		if stop, err = startScheduler(ctx, c, dir, name, ns, o); err != nil {
			return result{}, err
		}
	} else {
		// Arrival: the scheduler runs first and the pods arrive while it
		// runs, in creation order, as they would on a live cluster.
		if stop, err = startScheduler(ctx, c, dir, name, ns, o); err != nil {
			return result{}, err
		}
		time.Sleep(2 * time.Second) // caches synced
		start = time.Now()
		if err := createWork(ctx, c, ns, schedulerName, w); err != nil {
			stop()
			return result{}, fmt.Errorf("creating pods: %w", err)
		}
		created = time.Since(start)
	}
	first, last, err := waitSettled(ctx, c, ns, len(w.pods), o.settle)
	stop()
	if err != nil {
		return result{}, err
	}
	r, err := measure(ctx, c, ns, w, o)
	if err != nil {
		return result{}, err
	}
	r.Scheduler = name
	r.CreateSeconds = created.Seconds()
	r.Seconds = last.Sub(start).Seconds()
	if o.drain || name == ceiling {
		// The rate of binding itself, without the scheduler's start.
		r.Seconds = last.Sub(first).Seconds()
	}
	if r.Seconds > 0 {
		r.PodsPerSecond = float64(r.PodsBound) / r.Seconds
	}
	fmt.Printf("# %s: %d of %d pods bound in %.1f s (creating them took %.1f s)\n", name, r.PodsBound, r.Pods, r.Seconds, r.CreateSeconds)
	return r, cleanup(ctx, c, ns)
}

func makeNamespace(ctx context.Context, c *kubetest.Cluster, ns string) error {
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	_, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	return err
}

// startScheduler starts the named scheduler with a client of its own at
// o.qps and returns its stop.
func startScheduler(ctx context.Context, c *kubetest.Cluster, dir, name, ns string, o options) (func(), error) {
	switch name {
	case ceiling:
		return startCeiling(ctx, c, ns, o)
	case "corral":
		rc := rest.CopyConfig(c.Config)
		rc.QPS, rc.Burst = float32(o.qps), int(2*o.qps)
		cl, err := kube.NewClients(rc)
		if err != nil {
			return nil, err
		}
		cfg := kube.Config{NodeSelector: labels.SelectorFromSet(labels.Set{"bench": "gpu"}),
			Levels: []kube.Level{{Name: "rack", Labels: []string{"corral.sh/rack"}}}, Interval: time.Second, Events: cl.Events}
		log, err := corralLogger(o.corralLog)
		if err != nil {
			return nil, err
		}
		s := kube.New(cl.Client, cl.Dynamic, cfg, log)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(runCtx) }()
		return func() { cancel(); <-done }, nil
	case "kube-scheduler":
		return startUpstream(c, dir, "", o.qps)
	case "kube-packed":
		return startUpstream(c, dir, packedPlugins, o.qps)
	}
	return nil, fmt.Errorf("unknown scheduler %q (want corral, kube-scheduler, kube-packed or %s)", name, ceiling)
}

// packedPlugins configure NodeResourcesFit to score by MostAllocated with
// nvidia.com/gpu and its time-sliced replicas (nvidia.com/gpu.shared)
// weighted above CPU and memory: the upstream scheduler's documented
// bin-packing of extended resources (a node without a resource is not
// scored on it).
const packedPlugins = `    pluginConfig:
    - name: NodeResourcesFit
      args:
        scoringStrategy:
          type: MostAllocated
          resources:
          - {name: nvidia.com/gpu, weight: 10}
          - {name: nvidia.com/gpu.shared, weight: 10}
          - {name: cpu, weight: 1}
          - {name: memory, weight: 1}
`

func startUpstream(c *kubetest.Cluster, dir, plugins string, qps float64) (func(), error) {
	if c.Scheduler == "" {
		return nil, fmt.Errorf("no kube-scheduler binary: run scripts/deps/10-kube.sh")
	}
	kubeconfig, err := c.WriteKubeconfig(dir)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "kube-scheduler.yaml")
	body := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: %q, qps: %g, burst: %d}
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: default-scheduler
%s`, kubeconfig, qps, int(2*qps), plugins)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Scheduler, "--config="+config, "--secure-port=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting kube-scheduler: %w", err)
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		log.Close()
	}, nil
}

// waitSettled watches the pods until every pod is bound, or none was
// bound for settle, and returns the times of the first and last bindings
// seen (to the 100 ms it looks at its count). It watches rather than
// lists, so that counting thousands of pods takes as little as possible
// of the CPUs the API server and the scheduler share.
func waitSettled(ctx context.Context, c *kubetest.Cluster, ns string, total int, settle time.Duration) (first, last time.Time, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	boundUIDs := map[types.UID]bool{}
	note := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			mu.Lock()
			boundUIDs[p.UID] = true
			mu.Unlock()
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	pods := factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, obj any) { note(obj) }}); err != nil {
		return first, last, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return first, last, fmt.Errorf("watching the pods of %s: %w", ns, ctx.Err())
	}
	last, bound := time.Now(), 0
	for {
		mu.Lock()
		n := len(boundUIDs)
		mu.Unlock()
		if n > bound {
			bound, last = n, time.Now()
			if first.IsZero() {
				first = last
			}
		}
		if bound == total || time.Since(last) > settle {
			return first, last, nil
		}
		select {
		case <-ctx.Done():
			return first, last, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func measure(ctx context.Context, c *kubetest.Cluster, ns string, w *workload, o options) (result, error) {
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return result{}, err
	}
	r := result{Pods: len(w.pods)}
	used := map[string]int64{}     // whole GPUs in use, by node
	replicas := map[string]int64{} // time-sliced replicas in use, by node
	asked := map[string]int64{}    // pod name -> thousandths of a GPU asked, for fractional pods
	for _, ps := range w.pods {
		if ps.milli > 0 {
			asked[ps.name] = ps.milli
		}
	}
	inGroup := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" {
			continue
		}
		req := p.Spec.Containers[0].Resources.Requests
		q, shared := req[kubetest.ResourceGPU], req[kube.ResourceShared]
		used[p.Spec.NodeName] += q.Value()
		r.PodsBound++
		r.GPUsBound += q.Value()
		if asked[p.Name] > 0 {
			r.SharesBound++
			r.ShareMilliAsked += asked[p.Name]
		}
		if shared.Value() > 0 {
			replicas[p.Spec.NodeName] += shared.Value()
			r.ShareMilliGiven += shared.Value() * 1000 / int64(o.replicas)
		}
		if g := p.Labels[kube.LabelPodGroup]; g != "" {
			inGroup[g]++
		}
	}
	for node, k := range replicas {
		occupied := (k + int64(o.replicas) - 1) / int64(o.replicas)
		used[node] += occupied
		r.SharedGPUsOccupied += occupied
	}
	if w.dra {
		occupied, given, err := measureClaims(ctx, c, ns)
		if err != nil {
			return result{}, err
		}
		for node, k := range occupied {
			used[node] += k
			r.SharedGPUsOccupied += k
		}
		r.ShareMilliGiven = given
	}
	for _, u := range used {
		if u > 0 {
			r.NodesUsed++
		}
		if u > 0 && u < int64(o.gpusPerNode) {
			r.GPUsStranded += o.gpusPerNode - int(u)
		}
	}
	r.GPUsFree = int64(o.nodes*o.gpusPerNode) - r.GPUsBound - r.SharedGPUsOccupied
	for _, g := range w.groups {
		switch n := inGroup[g.name]; {
		case n >= g.minMember:
			r.GangsWhole++
		case n == 0:
			r.GangsNone++
		default:
			r.GangsPartial++
		}
	}
	return r, nil
}

// cleanup removes the run's pods so that the next run starts on empty
// nodes. Deleting tens of thousands of pods outlasts the API server's
// request timeout, which ends the deletion part way (a timeout, or the
// stream reset): it is asked again, up to deleteTries times.
const deleteTries = 20

func cleanup(ctx context.Context, c *kubetest.Cluster, ns string) error {
	zero := int64(0)
	for try := 1; ; try++ {
		err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err == nil {
			break
		}
		if try == deleteTries || ctx.Err() != nil {
			return fmt.Errorf("deleting the pods of %s, %d times: %w", ns, try, err)
		}
		time.Sleep(time.Second)
	}
	for {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return deleteClaims(ctx, c, ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
