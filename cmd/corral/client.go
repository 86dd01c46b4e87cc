package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/corral-sched/corral/internal/server/client"
)

// clientFlags are the flags every command that talks to a server takes.
type clientFlags struct {
	server, token string
}

const clientHelp = `
The server is --server, else $CORRAL_SERVER, else ` + client.DefaultServer + `;
the token is --token, else $CORRAL_TOKEN. 'corral server --dev' prints both.
`

// clientFlagSet is a client subcommand's flag set: errors and help go to
// stderr, and it takes the --server and --token flags.
func clientFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *clientFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &clientFlags{}
	fs.StringVar(&c.server, "server", "", "server URL (default $CORRAL_SERVER or "+client.DefaultServer+")")
	fs.StringVar(&c.token, "token", "", "API token (default $CORRAL_TOKEN)")
	return fs, c
}

// client builds the API client from the flags and the environment.
func (c *clientFlags) client() (*client.Client, error) {
	server := firstOf(c.server, os.Getenv("CORRAL_SERVER"), client.DefaultServer)
	token := firstOf(c.token, os.Getenv("CORRAL_TOKEN"))
	if token == "" {
		return nil, errors.New("no token: pass --token or set CORRAL_TOKEN (corral server --dev prints one)")
	}
	if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
		return nil, fmt.Errorf("server %q: want http://HOST:PORT or https://HOST:PORT", server)
	}
	return &client.Client{Server: server, Token: token}, nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// requestContext is cancelled by Ctrl-C, and after timeout when it is
// positive.
func requestContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if timeout <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stop() }
}

// noServer says, in one line, where a client looked for a server that
// did not answer and how to start one; ok is false for other errors.
func noServer(err error) (msg string, ok bool) {
	var ue *url.Error
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &ue) {
		return "", false
	}
	at := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		at = u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("no corral server at %s (connection refused; from --server, else $CORRAL_SERVER, else %s): start one with 'corral server --dev'",
		at, client.DefaultServer), true
}
