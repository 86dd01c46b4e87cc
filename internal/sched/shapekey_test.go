package sched

import (
	"reflect"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

// The hand-written key of a simple unit changes with every field of its
// group and demand (a list field makes the unit not simple: printed
// whole) and with the job fields the printed key has, so units share a
// key only when they would share the printed one.
func TestSimpleShapeKeyHasEveryField(t *testing.T) {
	base := func() *job.Job {
		return &job.Job{Name: "a", Groups: []job.Group{{Name: "w", Count: 2, Task: job.Demand{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024}}}}
	}
	key := func(j *job.Job) (string, bool) { return simpleShapeKey(j) }
	want, ok := key(base())
	if !ok {
		t.Fatal("the base job is not simple")
	}
	change := func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 7)
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		default:
			t.Fatalf("a field of kind %s: teach simpleShapeKey and this test about it", v.Kind())
		}
	}
	check := func(what string, mutate func(j *job.Job)) {
		j := base()
		mutate(j)
		if got, ok := key(j); ok && got == want {
			t.Errorf("changing %s leaves the key %q", what, got)
		}
	}
	for _, pair := range []struct {
		name string
		typ  reflect.Type
		at   func(j *job.Job) reflect.Value
	}{
		{"Group", reflect.TypeOf(job.Group{}), func(j *job.Job) reflect.Value { return reflect.ValueOf(&j.Groups[0]).Elem() }},
		{"Demand", reflect.TypeOf(job.Demand{}), func(j *job.Job) reflect.Value { return reflect.ValueOf(&j.Groups[0].Task).Elem() }},
	} {
		for i := range pair.typ.NumField() {
			f := pair.typ.Field(i)
			if f.Type.Kind() == reflect.Struct {
				continue // the Demand, checked field by field
			}
			check(pair.name+"."+f.Name, func(j *job.Job) { change(pair.at(j).Field(i)) })
		}
	}
	check("MinMember", func(j *job.Job) { j.MinMember = 1 })
	check("Elastic", func(j *job.Job) { j.Elastic = true })
	check("Preemptible", func(j *job.Job) { j.Preemptible = true })
	check("Topology", func(j *job.Job) { j.Topology = []job.Constraint{{Level: "node"}} })
	check("Tolerations", func(j *job.Job) { j.Tolerations = []string{"spot"} })
	// Fields the printed key leaves out leave the key too.
	j := base()
	j.Name, j.Tenant, j.Queue, j.Priority = "b", "t", "q", 9
	if got, _ := key(j); got != want {
		t.Errorf("name, tenant, queue and priority changed the key: %q, want %q", got, want)
	}
	// A name with the separators in it reads as no other.
	x, y := base(), base()
	x.Groups[0].Name, y.Groups[0].Name, y.Groups[0].Task.MIG = "w1:", "w", "1:"
	if kx, _ := key(x); kx == func() string { k, _ := key(y); return k }() {
		t.Errorf("two different groups share the key %q", kx)
	}
}
