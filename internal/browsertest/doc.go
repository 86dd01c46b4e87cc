// Package browsertest opens pages in a real headless Chromium for tests:
// it finds the browser (skipping the test when there is none, failing it
// when CORRAL_INTEGRATION=1), loads a page, and reports what a person
// would notice first: console errors and exceptions, the charts present,
// whether each chart has data drawn in it (a screenshot of its plot area
// in colour: ink.go), and whether the numbers in its tables match the JSON
// it embeds.
//
// It is imported only by tests. Start with Open in browser.go.
package browsertest
