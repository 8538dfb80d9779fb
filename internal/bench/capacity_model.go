package bench

import (
	"math"

	"redline/internal/benchdata"
)

// model is the capacity's posterior after the steps so far, on a grid of
// log rates over [lo, hi] and the widths: a flat prior in log rate, and
// for each step P(holds) = lapse/2 + (1-lapse) / (1 + exp((x - θ)/w)),
// x the step's log rate, θ the capacity, w the width. Steps add their
// log-likelihood as they come; a new range starts it again from the
// steps so far.
type model struct {
	lo, hi float64
	x      []float64   // log rates of the grid, increasing
	ll     [][]float64 // per width, per grid point
	p      []float64   // the marginal over widths, summing to 1
}

func newModel(lo, hi float64, curve []benchdata.CurveStep) *model {
	m := &model{lo: lo, hi: hi, x: make([]float64, capacityGrid), ll: make([][]float64, len(capacityWidths))}
	for j := range m.x {
		m.x[j] = lo + (hi-lo)*(float64(j)+0.5)/capacityGrid
	}
	for k := range m.ll {
		m.ll[k] = make([]float64, capacityGrid)
	}
	for _, cs := range curve {
		m.add(cs)
	}
	m.normalise()
	return m
}

// add adds one step's log-likelihood; normalise must follow.
func (m *model) add(cs benchdata.CurveStep) {
	if cs.OfferedRPS <= 0 {
		return
	}
	x := math.Log(cs.OfferedRPS)
	for k, w := range capacityWidths {
		row := m.ll[k]
		for j, th := range m.x {
			q := capacityLapse/2 + (1-capacityLapse)/(1+math.Exp((x-th)/w))
			if !cs.Holds {
				q = 1 - q
			}
			row[j] += math.Log(q)
		}
	}
}

func (m *model) normalise() {
	top := math.Inf(-1)
	for _, row := range m.ll {
		for _, v := range row {
			top = max(top, v)
		}
	}
	m.p = make([]float64, len(m.x))
	var total float64
	for j := range m.p {
		for _, row := range m.ll {
			m.p[j] += math.Exp(row[j] - top)
		}
		total += m.p[j]
	}
	for j := range m.p {
		m.p[j] /= total
	}
}

// quantile returns the log rate below which a share q of the posterior
// lies, interpolated within the grid cell.
func (m *model) quantile(q float64) float64 {
	var acc float64
	half := (m.hi - m.lo) / capacityGrid / 2
	for j, v := range m.p {
		if acc+v >= q && v > 0 {
			return m.x[j] - half + 2*half*(q-acc)/v
		}
		acc += v
	}
	return m.hi
}
