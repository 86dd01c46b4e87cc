package slurmfmt

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeForms lists the time limits ParseTime takes.
const TimeForms = "minutes (90), M:S, H:M:S, D-H, D-H:M, D-H:M:S, or a duration such as 90m, 2h30m or 1d"

// MaxTime is the longest time limit ParseTime takes.
const MaxTime = 100 * 365 * 24 * time.Hour

// ParseTime reads a time limit as Slurm's -t takes it (minutes, M:S,
// H:M:S, D-H, D-H:M, D-H:M:S; UNLIMITED and INFINITE are no limit, as is
// 0), or as a Go duration with an optional leading number of days (90m,
// 2h30m, 1d, 1d12h). A minute or second field after another field must be
// below 60; the first field may be any size ("48:00:00" is two days).
func ParseTime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "":
		return 0, errors.New("empty; want " + TimeForms)
	case "UNLIMITED", "INFINITE":
		return 0, nil
	}
	var d time.Duration
	var err error
	if strings.Trim(s, "0123456789:-") == "" {
		d, err = parseClock(s)
	} else {
		d, err = parseUnits(s)
	}
	if err != nil {
		return 0, fmt.Errorf("%w; want %s", err, TimeForms)
	}
	return d, nil
}

// parseClock reads Slurm's [D-]... forms.
func parseClock(s string) (time.Duration, error) {
	days, rest, hasDays := strings.Cut(s, "-")
	if !hasDays {
		days, rest = "0", s
	}
	fields := strings.Split(rest, ":")
	if len(fields) > 3 {
		return 0, fmt.Errorf("%d fields separated by ':', at most 3", len(fields))
	}
	// The unit of each field, in seconds, by form.
	units := map[bool][][]int64{
		false: {{60}, {60, 1}, {3600, 60, 1}},
		true:  {{3600}, {3600, 60}, {3600, 60, 1}},
	}[hasDays][len(fields)-1]
	d, err := field(days, "days")
	if err != nil {
		return 0, err
	}
	total := d * 86400
	for i, f := range fields {
		v, err := field(f, unitName(units[i]))
		if err != nil {
			return 0, err
		}
		if (i > 0 || hasDays) && units[i] < 3600 && v >= 60 {
			return 0, fmt.Errorf("%s %d: want 0..59 after another field", unitName(units[i]), v)
		}
		total += v * units[i]
	}
	return seconds(total)
}

func unitName(unit int64) string {
	switch unit {
	case 3600:
		return "hours"
	case 60:
		return "minutes"
	}
	return "seconds"
}

// field reads one number of a clock form: 1 to 9 digits.
func field(s, name string) (int64, error) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%s %q: want 1 to 9 digits", name, s)
	}
	return strconv.ParseInt(s, 10, 64)
}

func seconds(total int64) (time.Duration, error) {
	if total > int64(MaxTime/time.Second) {
		return 0, fmt.Errorf("over %d days", MaxTime/(24*time.Hour))
	}
	return time.Duration(total) * time.Second, nil
}

var daysPrefix = regexp.MustCompile(`^(\d{1,6})d(.*)$`)

// parseUnits reads a Go duration with an optional leading "<N>d".
func parseUnits(s string) (time.Duration, error) {
	var days int64
	if m := daysPrefix.FindStringSubmatch(s); m != nil {
		days, _ = strconv.ParseInt(m[1], 10, 64) // at most 6 digits: cannot fail
		if s = m[2]; s == "" || days*86400 > int64(MaxTime/time.Second) {
			return seconds(days * 86400)
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a time limit")
	}
	if d < 0 {
		return 0, errors.New("negative")
	}
	if d > MaxTime-time.Duration(days)*24*time.Hour {
		return 0, fmt.Errorf("over %d days", MaxTime/(24*time.Hour))
	}
	return d + time.Duration(days)*24*time.Hour, nil
}
