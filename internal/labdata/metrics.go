package labdata

// Metric is one quantity the lab compares between a variant and its
// baseline: its key in a Comparison (and in result.json), its short name
// where a person reads it (the terminal's table, a chart's panel), its
// title with unit and direction (a report's section), and which way is
// better. The lab, the report and the terminal all read this table, so a
// metric is named once.
type Metric struct {
	Key            string
	Name           string
	Title          string
	HigherIsBetter bool
}

// The metrics the lab compares: throughput and p99 for every workload,
// the run-to-run spread of throughput (lower is steadier), and for a
// workload with connect: true its connection set-up.
var (
	MetricRPS            = Metric{"rps", "throughput", "Throughput (requests/s, higher is better)", true}
	MetricP99            = Metric{"p99_ms", "p99", "p99 latency (ms, lower is better; each run's p99)", false}
	MetricSpread         = Metric{"rps_spread", "spread", "Run-to-run spread of throughput (% difference between successive runs, lower is steadier)", false}
	MetricConnectP99     = Metric{"connect_p99_ms", "connect p99", "connect p99 (ms, lower is better)", false}
	MetricSetup          = Metric{"setup_s", "set-up time", "set-up: all clients ready (s, lower is better)", false}
	MetricConnectSuccess = Metric{"connect_success", "connects that succeeded", "connects that succeeded (share, higher is better)", true}
)

// Metrics are every metric, in the order reports show them.
var Metrics = []Metric{MetricRPS, MetricP99, MetricSpread, MetricConnectP99, MetricSetup, MetricConnectSuccess}

// ConnectMetricList are the connection set-up metrics, in the lab's order.
var ConnectMetricList = []Metric{MetricConnectP99, MetricSetup, MetricConnectSuccess}

// MetricByKey is the metric of a Comparison's key.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricName is a metric's short name, or its key when the key is not
// one of Metrics (a result from a later redline).
func MetricName(key string) string {
	if m, ok := MetricByKey(key); ok {
		return m.Name
	}
	return key
}

// ConnectMetric is the connection set-up metric of a Comparison's key;
// false for every other metric.
func ConnectMetric(key string) (Metric, bool) {
	for _, m := range ConnectMetricList {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}
