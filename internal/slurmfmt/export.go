package slurmfmt

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ExportForms lists the rules Export takes.
const ExportForms = "ALL (the default), NONE, VAR1,VAR2=value (only these), or ALL,VAR=value,... (everything, and these)"

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// heldPrefixes and held are the variables an ALL export leaves out:
//   - CORRAL_*: the client's token and server, and the variables corral
//     sets in a job (a job submitted from inside another must not inherit
//     its CORRAL_JOB_ID);
//   - SLURM_*: an enclosing Slurm allocation's, which would make
//     Lightning, Accelerate or MPI believe the job runs under Slurm;
//   - the devices and ranks corral sets for each task, so that a job
//     submitted from inside a gang's rank 3 is not rank 3 itself;
//   - the shell's own state (the job's directory is its workdir).
var (
	heldPrefixes = []string{"CORRAL_", "SLURM_"}
	held         = map[string]bool{
		"CUDA_VISIBLE_DEVICES": true, "NVIDIA_VISIBLE_DEVICES": true, "CUDA_DEVICE_ORDER": true,
		"WORLD_SIZE": true, "RANK": true, "LOCAL_RANK": true, "LOCAL_WORLD_SIZE": true,
		"MASTER_ADDR": true, "MASTER_PORT": true,
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true,
	}
)

// Passable reports whether an ALL export sends the variable key: a valid
// name (letters, digits and '_'; not bash's exported functions) that is
// not held back (CORRAL_*, SLURM_*, the per-task device and rank
// variables, PWD, OLDPWD, SHLVL and _). A variable named in the rule is
// sent even when it is held back.
func Passable(key string) bool {
	if !nameRE.MatchString(key) || held[key] {
		return false
	}
	for _, p := range heldPrefixes {
		if strings.HasPrefix(key, p) {
			return false
		}
	}
	return true
}

// Export returns the KEY=VALUE entries a job gets under sbatch's --export
// rule, read from environ (as os.Environ returns it), in environ's order
// and then the rule's:
//   - "" or ALL: every Passable variable;
//   - NONE (or NIL): none;
//   - VAR1,VAR2=value: only these; a name alone takes its value from
//     environ and is skipped when environ lacks it, as in Slurm;
//   - ALL,VAR=value,...: every Passable variable, and these.
//
// Values cannot hold a comma, as in Slurm.
func Export(rule string, environ []string) ([]string, error) {
	items := strings.Split(strings.TrimSpace(rule), ",")
	switch strings.ToUpper(items[0]) {
	case "NONE", "NIL":
		if len(items) > 1 {
			return nil, fmt.Errorf("%s takes no variables; want %s", items[0], ExportForms)
		}
		return nil, nil
	case "", "ALL":
		if items[0] == "" && len(items) > 1 {
			return nil, errors.New("empty entry; want " + ExportForms)
		}
		return merge(environ, items[1:], true)
	}
	return merge(environ, items, false)
}

// merge applies the rule's items to environ, starting from every
// Passable variable when all is set.
func merge(environ, items []string, all bool) ([]string, error) {
	values := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] = v
	}
	current := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			current[k] = v
			if all && Passable(k) {
				set(k, v)
			}
		}
	}
	for _, it := range items {
		k, v, hasValue := strings.Cut(it, "=")
		if !nameRE.MatchString(k) {
			return nil, fmt.Errorf("variable %q: want a name of letters, digits and '_' (%s)", k, ExportForms)
		}
		if hasValue {
			set(k, v)
		} else if v, ok := current[k]; ok {
			set(k, v)
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+values[k])
	}
	return out, nil
}
