package main

import "time"

// reclaimPatienceHelp is the --reclaim-patience flag's help, the same in
// every face: the policy is the core's.
const reclaimPatienceHelp = "how long work within its team's own quota waits for room to appear by itself before the cohort peers' borrowed work is stopped to give the quota back (0: at once, as Kueue does); work of higher priority than the borrowers' does not wait"

// patienceSetting is a --reclaim-patience value as the faces' configs take
// it: 0 at the flag (at once) is negative there, where 0 is the core's
// default.
func patienceSetting(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1 // at once
	}
	return flag
}

// reservationSetting is kube.Config.Reservations for --reservations: the
// flag's 0 is none, which the config spells negative (its 0 is the
// default, one).
func reservationSetting(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}
