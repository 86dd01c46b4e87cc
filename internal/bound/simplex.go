package bound

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// solve runs a revised primal simplex on p, with an explicit basis inverse
// and sparse columns, starting from the all-slack basis (feasible since
// b >= 0). It returns the final basis's primal x and duals y.
//
// gonum's lp.Simplex gives the same optimum on small inputs (the tests
// compare), but it solves three dense m×m systems from scratch per
// iteration and needs the whole dense matrix, too slow for the several
// hundred rows and thousands of columns of a realistic cluster. Numerical trouble here cannot spoil the bound:
// dualBound certifies whatever y comes back.
func solve(p *lp) (x, y []float64, err error) {
	s := newSolver(p)
	maxIter := 20*(s.m+s.n) + 1000
	for it := 1; it <= maxIter; it++ {
		if it%refactorEvery == 0 {
			if err := s.refactor(); err != nil {
				return nil, nil, fmt.Errorf("simplex iteration %d: %w", it, err)
			}
		}
		s.duals()
		if !s.step() {
			break
		}
	}
	// An iteration limit is no error: the duals still certify a bound.
	if err := s.refactor(); err != nil {
		return nil, nil, fmt.Errorf("simplex final basis: %w", err)
	}
	s.duals()
	return s.primal(), s.y, nil
}

const (
	costTol       = 1e-9 // a reduced cost above it improves the objective
	pivotTol      = 1e-9 // the smallest pivot element used
	tieTol        = 1e-12
	refactorEvery = 100 // iterations between fresh inverses of the basis
	blandAfter    = 50  // degenerate pivots in a row before Bland's rule
)

var errSingular = errors.New("singular basis")

// solver holds the simplex state. Columns 0..n-1 are p's; column n+i is the
// slack of row i.
type solver struct {
	p      *lp
	m, n   int
	binv   []float64 // m×m, row-major: the inverse of the basis matrix
	basis  []int     // basis[k]: the column basic in position k
	inBase []bool
	xB     []float64 // values of the basic columns
	y      []float64 // duals: c_Bᵀ B⁻¹
	alpha  []float64 // B⁻¹ a_q for the entering column q
	degen  int       // degenerate pivots in a row
}

func newSolver(p *lp) *solver {
	m, n := len(p.b), len(p.cols)
	s := &solver{p: p, m: m, n: n, binv: make([]float64, m*m), basis: make([]int, m),
		inBase: make([]bool, n+m), xB: append([]float64(nil), p.b...),
		y: make([]float64, m), alpha: make([]float64, m)}
	for i := range m {
		s.binv[i*m+i] = 1
		s.basis[i] = n + i
		s.inBase[n+i] = true
	}
	return s
}

// step makes one pivot; it reports false when the basis is optimal.
func (s *solver) step() bool {
	bland := s.degen >= blandAfter
	q := s.entering(bland)
	if q < 0 {
		return false
	}
	s.column(q)
	r := s.leaving(bland)
	if r < 0 {
		// Unbounded: impossible, every column sits in a class row with
		// finite right-hand side. Stop; the duals still certify a bound.
		return false
	}
	theta := max(s.xB[r], 0) / s.alpha[r]
	if theta > tieTol {
		s.degen = 0
	} else {
		s.degen++
	}
	s.pivot(r, q, theta)
	return true
}

// duals sets y = c_Bᵀ B⁻¹.
func (s *solver) duals() {
	clear(s.y)
	for k, j := range s.basis {
		if j >= s.n || s.p.w[j] == 0 {
			continue
		}
		c, row := s.p.w[j], s.binv[k*s.m:(k+1)*s.m]
		for i, v := range row {
			s.y[i] += c * v
		}
	}
}

// reduced returns the reduced cost of column j.
func (s *solver) reduced(j int) float64 {
	if j >= s.n {
		return -s.y[j-s.n]
	}
	d := s.p.w[j]
	for _, e := range s.p.cols[j] {
		d -= e.val * s.y[e.row]
	}
	return d
}

// entering picks the column with the largest reduced cost (Dantzig), or
// under Bland's rule the first improving one; -1 when none improves.
func (s *solver) entering(bland bool) int {
	q, best := -1, costTol
	for j := range s.n + s.m {
		if s.inBase[j] {
			continue
		}
		if d := s.reduced(j); d > best {
			if bland {
				return j
			}
			q, best = j, d
		}
	}
	return q
}

// column sets alpha = B⁻¹ a_q.
func (s *solver) column(q int) {
	m := s.m
	if q >= s.n {
		for k := range m {
			s.alpha[k] = s.binv[k*m+q-s.n]
		}
		return
	}
	for k := range m {
		var a float64
		for _, e := range s.p.cols[q] {
			a += s.binv[k*m+e.row] * e.val
		}
		s.alpha[k] = a
	}
}

// leaving runs the ratio test; ties go to the larger pivot, or under Bland's
// rule to the smallest column index. It returns -1 when nothing bounds the
// step.
func (s *solver) leaving(bland bool) int {
	r, best := -1, 0.0
	for k, a := range s.alpha {
		if a <= pivotTol {
			continue
		}
		ratio := max(s.xB[k], 0) / a
		switch {
		case r < 0 || ratio < best-tieTol:
			r, best = k, ratio
		case ratio <= best+tieTol:
			if (bland && s.basis[k] < s.basis[r]) || (!bland && a > s.alpha[r]) {
				r = k
			}
			best = min(best, ratio)
		}
	}
	return r
}

// pivot brings column q into basis position r with step theta.
func (s *solver) pivot(r, q int, theta float64) {
	m := s.m
	for k, a := range s.alpha {
		s.xB[k] = max(s.xB[k]-theta*a, 0)
	}
	s.xB[r] = theta
	rowR := s.binv[r*m : (r+1)*m]
	inv := 1 / s.alpha[r]
	for i := range rowR {
		rowR[i] *= inv
	}
	for k, a := range s.alpha {
		if k == r || a == 0 {
			continue
		}
		row := s.binv[k*m : (k+1)*m]
		for i, v := range rowR {
			row[i] -= a * v
		}
	}
	s.inBase[s.basis[r]] = false
	s.basis[r] = q
	s.inBase[q] = true
}

// refactor recomputes B⁻¹ and x_B from scratch, shedding accumulated
// rounding.
func (s *solver) refactor() error {
	m := s.m
	b := mat.NewDense(m, m, nil)
	for k, j := range s.basis {
		if j >= s.n {
			b.Set(j-s.n, k, 1)
			continue
		}
		for _, e := range s.p.cols[j] {
			b.Set(e.row, k, e.val)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(b); err != nil {
		// A Condition error with a finite number still gives an inverse;
		// dualBound keeps the answer a bound whatever its accuracy.
		var c mat.Condition
		if !errors.As(err, &c) || math.IsInf(float64(c), 0) || math.IsNaN(float64(c)) {
			return fmt.Errorf("%w: %w", errSingular, err)
		}
	}
	for k := range m {
		var x float64
		for i := range m {
			v := inv.At(k, i)
			s.binv[k*m+i] = v
			x += v * s.p.b[i]
		}
		s.xB[k] = max(x, 0)
	}
	return nil
}

// primal returns x at the current basis.
func (s *solver) primal() []float64 {
	x := make([]float64, s.n)
	for k, j := range s.basis {
		if j < s.n {
			x[j] = s.xB[k]
		}
	}
	return x
}
