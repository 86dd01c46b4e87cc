package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/cost/alloc"
	"github.com/corral-sched/corral/internal/server/api"
)

// priced is corral acct --price --format json's answer.
type priced struct {
	By string `json:"by"`
	alloc.Bill
}

// A real server with its real store runs jobs of two tenants; corral acct
// --price bills each tenant the GPU-seconds it held at the price, the idle
// capacity on the __idle__ line, and the lines add up to the server's two
// GPUs over the period to the cent. With --idle share the idle cost goes
// to the tenants and the total stays.
func TestAcctServerBillPerTenant(t *testing.T) {
	dir := t.TempDir()
	admin := cliServer(t, filepath.Join(dir, "corral.db"), "2xA100-80GB")
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("corral %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	_, bobToken, _ := strings.Cut(cli("server", "tenant", "create", "--quota", "2", "bob"), "export CORRAL_TOKEN=")
	bobToken = strings.TrimSpace(bobToken)
	if nobody := "nobody"; os.Geteuid() == 0 { // as jobsAsNobody, for a server run by root; both as nobody, which a test may
		if _, err := admin.UpdateTenantForce(context.Background(), "bob", api.TenantUpdate{UnixUser: &nobody}, true); err != nil {
			t.Fatal(err)
		}
	}
	cli("submit", "--gpus", "2", "--name", "big", "sleep", "2")
	cli("submit", "--gpus", "1", "--name", "small", "--token", bobToken, "sleep", "1")
	waitJob(t, admin, "j000001", func(j api.Job) bool { return j.State == "succeeded" })
	waitJob(t, admin, "j000002", func(j api.Job) bool { return j.State == "succeeded" })

	var acct api.Acct
	json.Unmarshal([]byte(cli("acct", "--json")), &acct)
	gpuSeconds := map[string]float64{} // held: GPUs from start to end, launch included
	for _, r := range acct.Records {
		gpuSeconds[r.Tenant] += r.GPUs * r.End.Sub(r.Start).Seconds()
	}
	const usdPerGPUHour = 36000 // $10 a GPU-second, so that a few seconds are dollars
	for _, idle := range []string{"separate", "share"} {
		var b priced
		if err := json.Unmarshal([]byte(cli("acct", "--price", "A100=36000", "--idle", idle, "--format", "json")), &b); err != nil {
			t.Fatal(err)
		}
		want := alloc.Cents(math.Round(2 * b.End.Sub(b.Start).Hours() * usdPerGPUHour * 100))
		var sum alloc.Cents
		used := map[string]alloc.Cents{}
		for _, l := range b.Lines {
			sum += l.Total()
			used[l.Owner] += l.Used
		}
		if b.Total != want || sum != want {
			t.Errorf("idle %s: total $%s, lines $%s; want 2 GPUs x %s x $%d = $%s", idle, b.Total, sum, b.End.Sub(b.Start), usdPerGPUHour, want)
		}
		for _, tenant := range []string{"admin", "bob"} {
			if exact := gpuSeconds[tenant] * 10; gpuSeconds[tenant] == 0 || math.Abs(used[tenant].USD()-exact) > 0.01 {
				t.Errorf("idle %s: %s used $%s for %.3f GPU-seconds, want $%.2f", idle, tenant, used[tenant], gpuSeconds[tenant], exact)
			}
		}
		hasIdle := strings.Contains(cli("acct", "--price", "A100=36000", "--idle", idle), "__idle__")
		if hasIdle != (idle == "separate") {
			t.Errorf("idle %s: the table has an __idle__ line: %v", idle, hasIdle)
		}
	}
	if _, errOut, code := runCLI(t, "acct", "--price", "H100=3.93"); code == 0 || !strings.Contains(errOut, "no price for GPU model A100-80GB") {
		t.Errorf("a server's GPUs without a price: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "acct", "--price", "A100=1.29", "--token", bobToken); code == 0 || !strings.Contains(errOut, "needs an admin's token") {
		t.Errorf("a tenant's bill: exit %d, %q", code, errOut)
	}

	// A job still running is billed from its start to now.
	cli("submit", "--gpus", "1", "--name", "long", "--token", bobToken, "sleep", "60")
	long := waitJob(t, admin, "j000003", func(j api.Job) bool { return j.State == "running" })
	var b priced
	json.Unmarshal([]byte(cli("acct", "--price", "A100=36000", "--format", "json")), &b)
	var bob alloc.Cents
	for _, l := range b.Lines {
		if l.Owner == "bob" {
			bob += l.Used
		}
	}
	ran := b.End.Sub(*long.Started).Seconds()
	if exact := (gpuSeconds["bob"] + ran) * 10; ran <= 0 || math.Abs(bob.USD()-exact) > 0.01 {
		t.Errorf("bob with a running job: $%s, want $%.2f (%.3f GPU-seconds ended, %.3f running)", bob, exact, gpuSeconds["bob"], ran)
	}
	if out := cli("acct", "--price", "A100=36000"); !strings.Contains(out, "1 run not ended yet is counted up to") {
		t.Errorf("the table does not say a run is still going:\n%s", out)
	}
	cli("cancel", "j000003")
}
