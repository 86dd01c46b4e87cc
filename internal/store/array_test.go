package store

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/eligible"
)

// oldJob is a job record as servers wrote it before batch scripts,
// arrays, dependencies and holds existed.
const oldJob = `{"id":7,"tenant":"alice","spec":{"name":"train","command":["sleep","1"],"gpus":2,"tasks":1,"time_limit":3600000000000,"grace":10000000000},"state":"pending","submitted":"2026-01-02T03:04:05Z"}`

func TestRecordFromBeforeArraysAndHoldsLoads(t *testing.T) {
	s := openTemp(t)
	err := s.Update(func(tx *Tx) error { return tx.tx.Bucket(bucketJobs).Put(idKey(7), []byte(oldJob)) })
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Get(7)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != Pending || j.Spec.GPUs != 2 || j.Spec.TimeLimit != time.Hour || j.Held || j.ArrayJob != 0 || j.Array != nil ||
		!j.Spec.Dependency.None() || !j.Spec.Begin.IsZero() || j.Spec.Script != "" || j.Spec.Umask != nil {
		t.Fatalf("the old record reads as %+v", j)
	}
	if j.ArrayName() != "j000007" {
		t.Errorf("ArrayName %q; want j000007 for a job of its own", j.ArrayName())
	}
	j.Held = true
	if _, err := s.UpdateJob(7, func(x *Job) error { x.Held = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get(7); !j.Held || j.Spec.Name != "train" {
		t.Errorf("written back: %+v", j)
	}
}

func TestSubmitArrayNumbersTasksFromItsFirst(t *testing.T) {
	s := openTemp(t)
	if _, err := s.Submit("bob", Spec{Command: []string{"true"}, Tasks: 1}, t0); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Command: []string{"true"}, Tasks: 1,
		Dependency: eligible.Dependency{Terms: []eligible.Term{{Kind: eligible.AfterOK, Jobs: []uint64{1}}}}}
	jobs, err := s.SubmitArray(Job{Tenant: "alice", Spec: spec}, t0, []int{0, 4, 8}, Array{Count: 3, Min: 0, Max: 8, Step: 4, Limit: 2})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("SubmitArray: %d jobs, %v", len(jobs), err)
	}
	for i, j := range jobs {
		got, err := s.Get(j.ID)
		if err != nil || got.ID != uint64(2+i) || got.ArrayJob != 2 || got.ArrayIndex != 4*i || got.Array.Limit != 2 ||
			got.Spec.Dependency.IDs()[0] != 1 {
			t.Errorf("task %d: %+v, %v", i, got, err)
		}
	}
	if jobs[2].ArrayName() != "j000002_8" {
		t.Errorf("ArrayName %q; want j000002_8", jobs[2].ArrayName())
	}
}
