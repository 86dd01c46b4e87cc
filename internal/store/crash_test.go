package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// crashChildEnv names the database a re-executed test binary writes to
// until it is killed.
const crashChildEnv = "CORRAL_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	os.Exit(m.Run())
}

// crashChild submits jobs and moves them through states forever, printing
// the ID of each submission once it is committed (acknowledged).
func crashChild(path string) {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		j, err := s.Submit("t"+strconv.Itoa(i%3), Spec{Command: []string{"sleep", "1"}, Tasks: 1 + i%4, GPUs: 1}, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "%d\n", j.ID)
		out.Flush()
		if i%2 == 0 { // a decision: start it and account for the previous one
			err = s.Update(func(tx *Tx) error {
				j.State = Running
				j.Tasks = []Task{{Rank: 0, GPUs: []int{i % 8}, PID: 1000 + i}}
				if err := tx.PutJob(&j); err != nil {
					return err
				}
				return tx.AddRecord(Record{JobID: j.ID, Tenant: j.Tenant, End: time.Now(), GPUSeconds: 1})
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
	}
}

// TestCrashKeepsAcknowledgedWrites kills a writer with SIGKILL at random
// points, several times over one database, and checks after each crash
// that every acknowledged submission is there and the database is whole.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[uint64]bool{}
	for round := range 4 {
		ids := runAndKill(t, path, time.Duration(50+rng.IntN(250))*time.Millisecond)
		for _, id := range ids {
			acked[id] = true
		}
		s, err := Open(path)
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		checkConsistent(t, s, acked)
		s.Close()
	}
	if len(acked) == 0 {
		t.Fatal("the child acknowledged nothing; the test proves nothing")
	}
}

func runAndKill(t *testing.T, path string, after time.Duration) []uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			id, err := strconv.ParseUint(sc.Text(), 10, 64)
			if err == nil {
				ids = append(ids, id)
			}
		}
	}()
	time.Sleep(after)
	cmd.Process.Kill()
	<-done
	cmd.Wait()
	return ids
}

func checkConsistent(t *testing.T, s *Store, acked map[uint64]bool) {
	t.Helper()
	seen := map[uint64]bool{}
	var maxID uint64
	err := s.View(func(tx *Tx) error {
		if err := tx.Jobs(func(j *Job) bool {
			seen[j.ID] = true
			maxID = max(maxID, j.ID)
			if j.State != Pending && j.State != Running {
				t.Errorf("job %d in state %q", j.ID, j.State)
			}
			return true
		}); err != nil {
			return err
		}
		if next := tx.NextID(); next != maxID+1 && maxID > 0 {
			t.Errorf("next id %d, highest stored %d", next, maxID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading after crash: %v", err)
	}
	for id := range acked {
		if !seen[id] {
			t.Errorf("acknowledged job %d is lost", id)
		}
	}
	for id := uint64(1); id <= maxID; id++ {
		if !seen[id] {
			t.Errorf("job %d missing: ids have a hole below %d", id, maxID)
		}
	}
	if _, err := s.Records(Window{}); err != nil {
		t.Errorf("accounting unreadable: %v", err)
	}
}
