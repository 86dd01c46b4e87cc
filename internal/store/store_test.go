package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestSubmitGivesMonotonicIDsThatSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corral.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range 5 {
		j, err := s.Submit("alice", Spec{Command: []string{"true"}, Tasks: 1}, t0.Add(time.Duration(i)))
		if err != nil {
			t.Fatal(err)
		}
		if j.ID <= last || j.State != Pending {
			t.Fatalf("job %d: id %d after %d, state %s", i, j.ID, last, j.State)
		}
		last = j.ID
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j, err := s.Submit("bob", Spec{Command: []string{"true"}, Tasks: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != last+1 {
		t.Fatalf("after reopen got id %d, want %d", j.ID, last+1)
	}
	got, err := s.Get(last)
	if err != nil || got.Tenant != "alice" {
		t.Fatalf("Get(%d) = %+v, %v", last, got, err)
	}
}

func TestListFilters(t *testing.T) {
	s := openTemp(t)
	for _, tenant := range []string{"a", "b", "a"} {
		if _, err := s.Submit(tenant, Spec{Command: []string{"true"}, Tasks: 1}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateJob(3, func(j *Job) error { j.State = Running; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []uint64
	}{
		{"everything", Filter{}, []uint64{1, 2, 3}},
		{"one tenant", Filter{Tenant: "a"}, []uint64{1, 3}},
		{"one state", Filter{States: []State{Pending}}, []uint64{1, 2}},
		{"tenant and state", Filter{Tenant: "a", States: []State{Running}}, []uint64{3}},
		{"nothing", Filter{Tenant: "c"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := s.List(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, j := range jobs {
				got = append(got, j.ID)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestUpdateIsAllOrNothing(t *testing.T) {
	s := openTemp(t)
	j, _ := s.Submit("a", Spec{Command: []string{"true"}, Tasks: 1}, t0)
	before, _ := s.Dump()
	boom := errors.New("boom")
	err := s.Update(func(tx *Tx) error {
		j.State = Running
		if err := tx.PutJob(&j); err != nil {
			return err
		}
		if err := tx.AddRecord(Record{JobID: j.ID, Tenant: "a", End: t0}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	after, _ := s.Dump()
	if string(before) != string(after) {
		t.Fatalf("a failed transaction changed the store:\n%s\n---\n%s", before, after)
	}
}

func TestTokensAreHashedAndAuthenticate(t *testing.T) {
	s := openTemp(t)
	if err := s.CreateTenant(Tenant{Name: "alice", QuotaMilli: 2000}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTenant(Tenant{Name: "alice"}); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	tok, err := s.IssueToken("alice", t0, false)
	if err != nil {
		t.Fatal(err)
	}
	dump, _ := s.Dump()
	if contains(dump, []byte(tok)) {
		t.Fatal("the token is stored in the clear")
	}
	tn, err := s.Authenticate(tok, t0)
	if err != nil || tn.Name != "alice" || tn.QuotaMilli != 2000 {
		t.Fatalf("Authenticate = %+v, %v", tn, err)
	}
	if _, err := s.Authenticate(tok+"x", t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := s.IssueToken("nobody", t0, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("token for unknown tenant: %v", err)
	}
	if n, err := s.RevokeTokens("alice"); err != nil || n != 1 {
		t.Fatalf("revoke = %d, %v", n, err)
	}
	if _, err := s.Authenticate(tok, t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoked token still works: %v", err)
	}
}

// A rotation revokes the tenant's other tokens at once; the tokens are
// listed with when they were made and last used (written at most once a
// minute), and a deleted tenant's are gone with it. Records of tokens
// kept as a bare tenant name, as older stores did, still authenticate.
func TestTokenRotationListingAndDelete(t *testing.T) {
	s := openTemp(t)
	if err := s.CreateTenant(Tenant{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	old, err := s.IssueToken("bob", t0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(old, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.IssueToken("bob", t0.Add(2*time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(old, t0.Add(2*time.Hour)); !errors.Is(err, ErrNotFound) {
		t.Errorf("the rotated-out token authenticates: %v", err)
	}
	s.Authenticate(fresh, t0.Add(3*time.Hour))
	s.Authenticate(fresh, t0.Add(3*time.Hour+time.Second)) // within a minute: not written
	toks, err := s.Tokens("bob")
	if err != nil || len(toks) != 1 || !toks[0].Created.Equal(t0.Add(2*time.Hour)) || !toks[0].LastUsed.Equal(t0.Add(3*time.Hour)) || len(toks[0].ID) != 12 {
		t.Fatalf("tokens after rotation: %+v, %v", toks, err)
	}
	legacy := "crl_legacy"
	if err := s.Update(func(tx *Tx) error { return tx.tx.Bucket(bucketTokens).Put(hashToken(legacy), []byte("bob")) }); err != nil {
		t.Fatal(err)
	}
	if tn, err := s.Authenticate(legacy, t0); err != nil || tn.Name != "bob" {
		t.Errorf("a token record of an older store: %+v, %v", tn, err)
	}
	if err := s.DeleteTenant("bob"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{fresh, legacy} {
		if _, err := s.Authenticate(tok, t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("a deleted tenant's token authenticates: %v", err)
		}
	}
	if err := s.Audit(AuditEntry{Time: t0, Actor: "admin", Action: "tenant delete", Target: "bob"}); err != nil {
		t.Fatal(err)
	}
	if log, err := s.AuditLog(); err != nil || len(log) != 1 || log[0].Seq != 1 || log[0].Target != "bob" {
		t.Errorf("audit log %+v, %v", log, err)
	}
}

func contains(hay, needle []byte) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if string(hay[i:i+len(needle)]) == string(needle) {
			return true
		}
	}
	return false
}

func TestRecordsAndSums(t *testing.T) {
	s := openTemp(t)
	recs := []Record{
		{JobID: 1, Tenant: "a", GPUModel: "H100-80GB", End: t0, GPUSeconds: 10},
		{JobID: 2, Tenant: "a", GPUModel: "H100-80GB", End: t0.Add(30 * time.Minute), GPUSeconds: 5},
		{JobID: 3, Tenant: "a", GPUModel: "H100-80GB", MIGProfile: "1g.10gb", End: t0.Add(2 * time.Hour), GPUSeconds: 1},
		{JobID: 4, Tenant: "b", GPUModel: "H100-80GB", End: t0.Add(time.Hour), GPUSeconds: 7},
	}
	err := s.Update(func(tx *Tx) error {
		for _, r := range recs {
			if err := tx.AddRecord(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Records(Window{Tenant: "a", Since: t0.Add(time.Minute)})
	if len(got) != 2 || got[0].JobID != 2 || got[1].JobID != 3 {
		t.Fatalf("records of a since t0+1m: %+v", got)
	}
	got, _ = s.Records(Window{Until: t0.Add(time.Hour)})
	if len(got) != 2 {
		t.Fatalf("records before t0+1h: %+v", got)
	}
	sums, err := s.Sums(Window{}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []Sum{
		{Tenant: "a", Period: t0.Truncate(time.Hour), GPUModel: "H100-80GB", Jobs: 2, GPUSeconds: 15},
		{Tenant: "a", Period: t0.Truncate(time.Hour).Add(2 * time.Hour), GPUModel: "H100-80GB", MIGProfile: "1g.10gb", Jobs: 1, GPUSeconds: 1},
		{Tenant: "b", Period: t0.Truncate(time.Hour).Add(time.Hour), GPUModel: "H100-80GB", Jobs: 1, GPUSeconds: 7},
	}
	if len(sums) != len(want) {
		t.Fatalf("sums = %+v", sums)
	}
	for i := range want {
		if sums[i] != want[i] {
			t.Errorf("sum %d = %+v, want %+v", i, sums[i], want[i])
		}
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"j000017", 17, true}, {"17", 17, true}, {"j0", 0, false}, {"", 0, false},
		{"../etc", 0, false}, {"j12x", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := ParseID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseID(%q) = %d, %v", tc.in, got, err)
		}
	}
}
