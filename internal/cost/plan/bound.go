package plan

// MaxCurvePoints bounds the cost curve a plan keeps for its outputs: a
// demand of a million GPUs has a million levels, and every one of them in
// the JSON and the HTML chart would make files of a hundred megabytes. The
// optimum is found on the whole curve; the kept curve is every k-th level,
// with level 0, the chosen level and the peak always among them.
const MaxCurvePoints = 1000

// thinCurve keeps at most about MaxCurvePoints points of c, in level order,
// and always the first, the last and the one at level chosen.
func thinCurve(c []Point, chosen int) []Point {
	if len(c) <= MaxCurvePoints {
		return c
	}
	step := (len(c) + MaxCurvePoints - 1) / MaxCurvePoints
	out := make([]Point, 0, MaxCurvePoints+2)
	for i, p := range c {
		if i%step == 0 || i == len(c)-1 || p.Committed == chosen {
			out = append(out, p)
		}
	}
	return out
}
