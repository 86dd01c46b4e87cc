package slurmfmt

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// BeginForms lists the times ParseBegin takes.
const BeginForms = "now+COUNT[seconds|minutes|hours|days|weeks] (now+1hour), HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], midnight, noon, teatime, today, tomorrow, or RFC 3339"

var (
	relativeRE = regexp.MustCompile(`^now(?:([+-])(\d{1,9})([a-z]*))?$`)
	clockRE    = regexp.MustCompile(`^(\d{1,2}):(\d{2})(?::(\d{2}))?$`)
	dateRE     = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:t(\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
)

// ParseBegin reads a time as sbatch's --begin (and sacct's -S) takes
// it, relative to now in now's location: now+COUNT with a unit (seconds
// when none; now+1hour, now+30minutes), a clock time HH:MM[:SS] (today,
// or tomorrow when it has passed), a date YYYY-MM-DD with an optional
// THH:MM[:SS], the words midnight, noon, elevenses, fika, teatime,
// today and tomorrow, or RFC 3339.
func ParseBegin(s string, now time.Time) (time.Time, error) {
	return parseWhen(s, now, true)
}

// ParseSince reads a time as sacct's -S and -E take it: the forms of
// ParseBegin, but a clock time or a word names today's, passed or not.
func ParseSince(s string, now time.Time) (time.Time, error) {
	return parseWhen(s, now, false)
}

// parseWhen reads the forms of ParseBegin; ahead moves a clock time or
// a word that has passed today to tomorrow.
func parseWhen(s string, now time.Time, ahead bool) (time.Time, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t, nil
	}
	if m := relativeRE.FindStringSubmatch(s); m != nil {
		return relative(now, m[1], m[2], m[3])
	}
	if m := clockRE.FindStringSubmatch(s); m != nil {
		t, err := atClock(now, m[1], m[2], m[3])
		if err == nil && ahead && !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t, err
	}
	if m := dateRE.FindStringSubmatch(s); m != nil {
		return onDate(now, m[1:])
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	words := map[string]time.Duration{"midnight": 24 * time.Hour, "noon": 12 * time.Hour, "elevenses": 11 * time.Hour,
		"fika": 15 * time.Hour, "teatime": 16 * time.Hour}
	switch s {
	case "today":
		return day, nil
	case "tomorrow":
		return day.AddDate(0, 0, 1), nil
	}
	if d, ok := words[s]; ok {
		t := day.Add(d)
		if ahead && !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	return time.Time{}, errors.New("not a time; want " + BeginForms)
}

// relative is now plus or minus count units.
func relative(now time.Time, sign, count, unit string) (time.Time, error) {
	if sign == "" {
		return now, nil
	}
	n, _ := strconv.ParseInt(count, 10, 64) // at most 9 digits: cannot fail
	var per time.Duration
	switch {
	case unit == "" || strings.HasPrefix("seconds", unit):
		per = time.Second
	case strings.HasPrefix("minutes", unit) && len(unit) >= 3:
		per = time.Minute
	case strings.HasPrefix("hours", unit):
		per = time.Hour
	case strings.HasPrefix("days", unit):
		per = 24 * time.Hour
	case strings.HasPrefix("weeks", unit):
		per = 7 * 24 * time.Hour
	default:
		return time.Time{}, fmt.Errorf("unit %q: want seconds, minutes, hours, days or weeks", unit)
	}
	if n > int64(MaxTime/per) {
		return time.Time{}, fmt.Errorf("over %d days away", MaxTime/(24*time.Hour))
	}
	d := time.Duration(n) * per
	if sign == "-" {
		d = -d
	}
	return now.Add(d), nil
}

// atClock is today at the clock time.
func atClock(now time.Time, hh, mm, ss string) (time.Time, error) {
	h, _ := strconv.Atoi(hh)
	m, _ := strconv.Atoi(mm)
	sec := 0
	if ss != "" {
		sec, _ = strconv.Atoi(ss)
	}
	if h > 23 || m > 59 || sec > 59 {
		return time.Time{}, fmt.Errorf("clock %s:%s: want HH:MM[:SS] within a day", hh, mm)
	}
	return time.Date(now.Year(), now.Month(), now.Day(), h, m, sec, 0, now.Location()), nil
}

// onDate is the date, at its clock time when given (midnight when not).
func onDate(now time.Time, f []string) (time.Time, error) {
	y, _ := strconv.Atoi(f[0])
	mo, _ := strconv.Atoi(f[1])
	d, _ := strconv.Atoi(f[2])
	if mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, fmt.Errorf("date %s-%s-%s: want YYYY-MM-DD", f[0], f[1], f[2])
	}
	day := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, now.Location())
	if day.Day() != d {
		return time.Time{}, fmt.Errorf("date %s-%s-%s: no such day", f[0], f[1], f[2])
	}
	if f[3] == "" {
		return day, nil
	}
	t, err := atClock(day, f[3], f[4], f[5])
	return t, err
}
