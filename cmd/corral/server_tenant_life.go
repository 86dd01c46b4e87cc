package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

// tenantVerbs are the verbs of corral server tenant.
const tenantVerbs = "list, create, set, token, tokens, delete or audit"

// tenantLife are the flags of the tenant verbs that rotate, list and
// delete: a tenant's lifecycle.
type tenantLife struct {
	keep, drain, force, json bool
}

func (l *tenantLife) register(fs *flag.FlagSet) {
	fs.BoolVar(&l.keep, "keep", false, "token: keep the tenant's other tokens (default: they are revoked at once)")
	fs.BoolVar(&l.drain, "drain", false, "delete: cancel the tenant's waiting and running jobs (default: refused while there are any)")
	fs.BoolVar(&l.json, "json", false, "print JSON: the API's answer (tenants, the token, tokens, the deletion, the audit log)")
	fs.BoolVar(&l.force, "force", false, "create, set: even when the tenant shares a Unix user with another, or the GPU quotas sum above the machine's GPUs")
}

// printToken issues a new token for tenant and prints it, once.
func (l tenantLife) printToken(ctx context.Context, c *client.Client, tenant string, stdout io.Writer) error {
	issue, note := c.IssueToken, "its other tokens are revoked"
	if l.keep {
		issue, note = c.AddToken, "its other tokens still work"
	}
	tok, err := issue(ctx, tenant)
	if err != nil {
		return err
	}
	if l.json {
		return printJSON(stdout, tok)
	}
	fmt.Fprintf(stdout, "Token for tenant %q (shown once; %s):\n\nexport CORRAL_TOKEN=%s\n", tok.Tenant, note, tok.Token)
	return nil
}

// run serves tokens, delete and audit; false when verb and rest are
// none of them.
func (l tenantLife) run(ctx context.Context, c *client.Client, verb string, rest []string, stdout io.Writer) (bool, error) {
	switch {
	case verb == "tokens" && len(rest) == 1:
		return true, l.printTokens(ctx, c, rest[0], stdout)
	case verb == "delete" && len(rest) == 1:
		d, err := c.DeleteTenant(ctx, rest[0], l.drain)
		if err != nil {
			return true, err
		}
		if l.json {
			return true, printJSON(stdout, d)
		}
		fmt.Fprintf(stdout, "Deleted tenant %s and its tokens", d.Tenant)
		if len(d.Cancelled) > 0 {
			fmt.Fprintf(stdout, "; cancelled %s", strings.Join(d.Cancelled, " "))
		}
		fmt.Fprintln(stdout)
		return true, nil
	case verb == "audit" && len(rest) == 0:
		return true, l.printAudit(ctx, c, stdout)
	}
	return false, nil
}

func (l tenantLife) printTokens(ctx context.Context, c *client.Client, tenant string, stdout io.Writer) error {
	list, err := c.Tokens(ctx, tenant)
	if err != nil {
		return err
	}
	if l.json {
		return printJSON(stdout, list)
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN ID\tCREATED\tLAST USED")
	for _, t := range list.Tokens {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, localTime(t.Created), localTime(t.LastUsed))
	}
	return tw.Flush()
}

func (l tenantLife) printAudit(ctx context.Context, c *client.Client, stdout io.Writer) error {
	log, err := c.Audit(ctx)
	if err != nil {
		return err
	}
	if l.json {
		return printJSON(stdout, api.AuditLog{Entries: log})
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tADMIN\tACTION\tTENANT\tDETAIL")
	for _, e := range log {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), e.Actor, e.Action, e.Target, e.Detail)
	}
	return tw.Flush()
}

// localTime shows a time in the local zone, or "-".
func localTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

// refuseRootIDs refuses --uid 0 or --gid 0 on create, which the API
// would take for no Unix user at all: root is never a tenant's user.
// (On set, 0 unsets them.)
func refuseRootIDs(fs *flag.FlagSet, verb string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if verb == "create" && (f.Name == "uid" || f.Name == "gid") && f.Value.String() == "0" {
			err = fmt.Errorf("--%s 0 is root's: a tenant's jobs never run as root (give the tenant's own --unix-user or --uid)", f.Name)
		}
	})
	return err
}
