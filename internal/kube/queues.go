package kube

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
)

// QueueResource is corral's Queue, whose CRD is
// deploy/crds/corral.sh_queues.yaml. Pods name theirs with LabelQueue.
var QueueResource = schema.GroupVersionResource{Group: "corral.sh", Version: "v1alpha1", Resource: "queues"}

// LabelQueue names the Queue a pod is charged to.
const LabelQueue = "corral.sh/queue"

// anyGPU is the flavor a Queue's GPU quota is given in: GPUs of any model.
var anyGPU = queue.Flavor{Model: "any", Capacity: "any"}

// chargerFor is how Queues count pods: the core's one charge, GPUs of any
// model and the CPU and memory the pods request (spec.quota.gpus, cpu and
// memory), and each model's GPUs where a Queue caps models
// (spec.quota.models).
func chargerFor(queues map[string]*queueSpec) sched.Charger {
	c := sched.Charger{GPU: anyGPU, Resources: true}
	for _, q := range queues {
		c.ByModel = c.ByModel || len(q.Models) > 0
	}
	return c
}

// unlimited quota, in milli-GPUs, milli-cores or MiB, for a Queue without
// spec.quota.gpus, cpu or memory.
const noQuota = int64(1) << 50

// queueSpec is what the scheduler reads from a Queue.
type queueSpec struct {
	Name, Tenant string
	GPUs         int64 // whole GPUs; -1: no limit
	// CPUMilli and MemoryMiB cap the CPU and memory its pods request
	// (spec.quota.cpu, spec.quota.memory); nil: no limit.
	CPUMilli, MemoryMiB *int64
	// Cohort lends and borrows unused quota among its queues; Borrow caps
	// what this queue borrows (-1: no cap).
	Cohort string
	Borrow int64
	// Models caps the GPUs of each model it holds (spec.quota.models), by
	// catalog name; nil: no cap.
	Models map[string]int64
	// BorrowModels caps what it borrows of each model's cap in its cohort
	// (spec.borrowingLimit.models); nil: what the cohort lends.
	BorrowModels map[string]int64
	// BorrowCPUMilli and BorrowMemoryMiB cap the CPU and memory it
	// borrows (spec.borrowingLimit.cpu, .memory); nil: no cap.
	BorrowCPUMilli, BorrowMemoryMiB *int64
	// Budget caps its GPU-hours, or dollars at its nodes' prices
	// (AnnotationGPUPrice), per period (spec.budget); nil: none.
	Budget *sched.Budget
}

func parseQueue(obj *unstructured.Unstructured) (*queueSpec, error) {
	q := &queueSpec{Name: obj.GetName(), GPUs: -1}
	q.Tenant, _, _ = unstructured.NestedString(obj.Object, "spec", "tenant")
	gpus, found, err := unstructured.NestedInt64(obj.Object, "spec", "quota", "gpus")
	if err != nil {
		return nil, fmt.Errorf("queue %s: spec.quota.gpus: %w", q.Name, err)
	}
	if found {
		q.GPUs = gpus
	}
	for _, r := range []struct {
		field string
		into  **int64
		in    func(resource.Quantity) int64
	}{
		{"quota.cpu", &q.CPUMilli, milliCores}, {"quota.memory", &q.MemoryMiB, mebibytes},
		{"borrowingLimit.cpu", &q.BorrowCPUMilli, milliCores}, {"borrowingLimit.memory", &q.BorrowMemoryMiB, mebibytes},
	} {
		if *r.into, err = specQuantity(obj, r.field, r.in); err != nil {
			return nil, fmt.Errorf("queue %s: %w", q.Name, err)
		}
	}
	if q.Models, err = modelCaps(obj, "quota"); err != nil {
		return nil, fmt.Errorf("queue %s: %w", q.Name, err)
	}
	if q.BorrowModels, err = modelCaps(obj, "borrowingLimit"); err != nil {
		return nil, fmt.Errorf("queue %s: %w", q.Name, err)
	}
	q.Cohort, _, _ = unstructured.NestedString(obj.Object, "spec", "cohort")
	q.Borrow = -1
	borrow, found, err := unstructured.NestedInt64(obj.Object, "spec", "borrowingLimit", "gpus")
	if err != nil {
		return nil, fmt.Errorf("queue %s: spec.borrowingLimit.gpus: %w", q.Name, err)
	}
	if found {
		q.Borrow = borrow
	}
	if spec, found, _ := unstructured.NestedString(obj.Object, "spec", "budget"); found && spec != "" {
		b, err := sched.ParseBudget(spec)
		if err != nil {
			return nil, fmt.Errorf("queue %s: spec.budget: %w", q.Name, err)
		}
		q.Budget = &b
	}
	return q, nil
}

// specQuantity reads spec.<field> ("quota.cpu"), a Kubernetes quantity
// ("32", "500m", "256Gi"), in the unit in gives; nil when absent.
func specQuantity(obj *unstructured.Unstructured, field string, in func(resource.Quantity) int64) (*int64, error) {
	path := append([]string{"spec"}, strings.Split(field, ".")...)
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		return nil, err
	}
	q, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil || q.Sign() < 0 {
		return nil, fmt.Errorf("spec.%s %v: want a quantity of at least 0, such as 32 or 256Gi", field, v)
	}
	n := in(q)
	return &n, nil
}

// modelCaps reads spec.<field>.models (quota, borrowingLimit): whole GPUs
// by model, the names (catalog names or aliases, such as H100) resolved
// through the catalog.
func modelCaps(obj *unstructured.Unstructured, field string) (map[string]int64, error) {
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", field, "models")
	if err != nil || !found {
		return nil, err
	}
	out := map[string]int64{}
	for name, v := range raw {
		n, ok := v.(int64)
		if !ok || n < 0 {
			return nil, fmt.Errorf("spec.%s.models.%s %v: want whole GPUs, 0 or more", field, name, v)
		}
		model := name
		if m, err := gpu.Lookup(name); err == nil {
			model = m.Name
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("spec.%s.models: %s named twice", field, model)
		}
		out[model] = n
	}
	return out, nil
}

func milliCores(v resource.Quantity) int64 { return v.MilliValue() }
func mebibytes(v resource.Quantity) int64  { return v.Value() / (1 << 20) }

// queueSpecs are the queues as the quota book takes them: a queue without
// a quota has no limit, and fair share measures its use against the
// cluster's GPUs; each queue's pods by priority, then age.
func queueSpecs(queues map[string]*queueSpec, clusterGPUs int, models []string) []queue.Spec {
	byModel := chargerFor(queues).ByModel
	names := make([]string, 0, len(queues))
	for n := range queues {
		names = append(names, n)
	}
	sort.Strings(names)
	specs := make([]queue.Spec, 0, len(names))
	for _, n := range names {
		q := queues[n]
		spec := queue.Spec{Name: n, Cohort: q.Cohort, Nominal: queue.Amounts{anyGPU: noQuota}, ShareGPUs: float64(max(clusterGPUs, 1)), Order: queue.PriorityFIFO}
		if q.GPUs >= 0 {
			spec.Nominal[anyGPU], spec.ShareGPUs = q.GPUs*queue.Milli, 0
		}
		if q.Borrow >= 0 && spec.Cohort != "" {
			spec.BorrowingLimit = queue.Amounts{anyGPU: q.Borrow * queue.Milli}
		}
		resourceQuota(&spec, queue.CPU, q.CPUMilli, q.BorrowCPUMilli)
		resourceQuota(&spec, queue.Memory, q.MemoryMiB, q.BorrowMemoryMiB)
		if byModel {
			for _, m := range modelsOf(q, models) {
				resourceQuota(&spec, queue.ModelCap(m), modelMilli(q.Models, m), modelMilli(q.BorrowModels, m))
			}
		}
		specs = append(specs, spec)
	}
	return specs
}

// modelMilli is caps[model] in milli-GPUs; nil when caps does not name it.
func modelMilli(caps map[string]int64, model string) *int64 {
	n, ok := caps[model]
	if !ok {
		return nil
	}
	milli := n * queue.Milli
	return &milli
}

// modelsOf are the fleet's GPU models and those q caps, by name.
func modelsOf(q *queueSpec, fleetModels []string) []string {
	out := slices.Clone(fleetModels)
	for m := range q.Models {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// resourceQuota sets a queue's CPU or memory quota: limit, with what it
// may borrow beyond it in its cohort (borrow; nil: what the cohort lends),
// or without a limit none, of which it lends nothing to its cohort (so
// that a capped peer cannot borrow without bound).
func resourceQuota(spec *queue.Spec, f queue.Flavor, limit, borrow *int64) {
	if limit != nil {
		spec.Nominal[f] = *limit
		if borrow != nil && spec.Cohort != "" {
			if spec.BorrowingLimit == nil {
				spec.BorrowingLimit = queue.Amounts{}
			}
			spec.BorrowingLimit[f] = *borrow
		}
		return
	}
	spec.Nominal[f] = noQuota
	if spec.Cohort == "" {
		return // it lends nothing anyway
	}
	if spec.LendingLimit == nil {
		spec.LendingLimit = queue.Amounts{}
	}
	spec.LendingLimit[f] = 0
}
