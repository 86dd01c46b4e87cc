package scalebench

// Result is the stable machine-readable output of corral bench scale.
// Times are in the units their names say; latencies are per Place call.
// corral bench scale -h defines every field.
type Result struct {
	Nodes       int    `json:"nodes"`
	WholeNodes  int    `json:"whole_gpu_nodes"`
	MIGNodes    int    `json:"mig_nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	GPUs        int    `json:"gpus"`
	GPUModel    string `json:"gpu_model"`
	MIGModel    string `json:"mig_gpu_model"`
	PinWhole    bool   `json:"pin_whole"`
	PodPolicy   string `json:"pod_policy"`
	Seed        uint64 `json:"seed"`
	GoVersion   string `json:"go_version"`
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	NumCPU      int    `json:"num_cpu"`

	FleetBuildSeconds float64 `json:"fleet_build_seconds"`
	StateBuildSeconds float64 `json:"state_build_seconds"`
	HeapBytes         uint64  `json:"heap_bytes"`
	FleetHeapBytes    int64   `json:"fleet_heap_bytes"`
	StateHeapBytes    int64   `json:"state_heap_bytes"`

	Decisions                int            `json:"decisions"`
	DecisionsPlaced          int            `json:"decisions_placed"`
	DecisionsUnfit           int            `json:"decisions_unfit"`
	DecisionsUnfitMIG        int            `json:"decisions_unfit_mig"`
	WarmupPlaced             int            `json:"warmup_placed"`
	Releases                 int            `json:"releases"`
	StreamSeconds            float64        `json:"stream_seconds"`
	DecisionsPerSec          float64        `json:"decisions_per_sec"`
	DecisionsPerSecPlaceOnly float64        `json:"decisions_per_sec_place_only"`
	P50DecisionMs            float64        `json:"p50_decision_ms"`
	P90DecisionMs            float64        `json:"p90_decision_ms"`
	P99DecisionMs            float64        `json:"p99_decision_ms"`
	P999DecisionMs           float64        `json:"p999_decision_ms"`
	MaxDecisionMs            float64        `json:"max_decision_ms"`
	DecisionsOver1ms         int            `json:"decisions_over_1ms"`
	P99ReleaseMs             float64        `json:"p99_release_ms"`
	OccupancyMinPct          float64        `json:"occupancy_min_pct"`
	OccupancyMeanPct         float64        `json:"occupancy_mean_pct"`
	OccupancyMaxPct          float64        `json:"occupancy_max_pct"`
	PodKinds                 []PodKindStats `json:"pod_kinds"`

	Gang512Trials         int          `json:"gang512_trials"`
	Gang512Placed         int          `json:"gang512_placed"`
	Gang512Unfit          int          `json:"gang512_unfit"`
	Gang512P50Ms          float64      `json:"gang512_p50_ms"`
	Gang512P99Ms          float64      `json:"gang512_p99_ms"`
	Gang512MaxMs          float64      `json:"gang512_max_ms"`
	Gang512Shapes         []ShapeStats `json:"gang512_shapes"`
	Gang512OccupancyPct   float64      `json:"gang512_occupancy_pct"`
	Gang512FreeNodes      int          `json:"gang512_free_nodes"`
	Gang512HalfFreeNodes  int          `json:"gang512_half_free_nodes"`
	Gang512FillJobs       int          `json:"gang512_fill_jobs"`
	Gang512FillPeakPct    float64      `json:"gang512_fill_peak_pct"`
	MixedGangs            int          `json:"mixed_gangs"`
	MixedGangsPlaced      int          `json:"mixed_gangs_placed"`
	MixedGangsUnfit       int          `json:"mixed_gangs_unfit"`
	MixedGangsReleased    int          `json:"mixed_gangs_released"`
	MixedGangsGPUsPlaced  int          `json:"mixed_gangs_gpus_placed"`
	MixedGangsSeconds     float64      `json:"mixed_gangs_seconds"`
	MixedGangsLoopSeconds float64      `json:"mixed_gangs_loop_seconds"`
	MixedGangsP50Ms       float64      `json:"mixed_gangs_p50_ms"`
	MixedGangsP99Ms       float64      `json:"mixed_gangs_p99_ms"`
	MixedGangsMaxMs       float64      `json:"mixed_gangs_max_ms"`

	Thresholds Thresholds `json:"thresholds"`
	Pass       Pass       `json:"pass"`
}

// PodKindStats are the stream's decisions of one kind of pod: 1-GPU pods
// placed by the live policy (pod_policy), or MIG pods of one profile placed by the MIG
// search (policy "mig").
type PodKindStats struct {
	Kind            string  `json:"kind"`
	Policy          string  `json:"policy"`
	Decisions       int     `json:"decisions"`
	Placed          int     `json:"placed"`
	PlaceSeconds    float64 `json:"place_seconds"`
	PerSecPlaceOnly float64 `json:"decisions_per_sec_place_only"`
	P50Ms           float64 `json:"p50_ms"`
	P99Ms           float64 `json:"p99_ms"`
}

// ShapeStats are the gang512 trials of one gang shape.
type ShapeStats struct {
	Tasks       int     `json:"tasks"`
	GPUsPerTask int     `json:"gpus_per_task"`
	Trials      int     `json:"trials"`
	Placed      int     `json:"placed"`
	Unfit       int     `json:"unfit"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
}

// Thresholds are the targets a run is judged against.
type Thresholds struct {
	MinDecisionsPerSec   float64 `json:"min_decisions_per_sec"`
	MaxP99DecisionMs     float64 `json:"max_p99_decision_ms"`
	MaxGang512P99Ms      float64 `json:"max_gang512_p99_ms"`
	MaxMixedGangsSeconds float64 `json:"max_mixed_gangs_seconds"` // 5 s per 1,000 gangs
}

// Pass says which targets a run met.
type Pass struct {
	DecisionsPerSec bool `json:"decisions_per_sec"`
	P99Decision     bool `json:"p99_decision_ms"`
	Gang512P99      bool `json:"gang512_p99_ms"`
	MixedGangs      bool `json:"mixed_gangs_seconds"`
	All             bool `json:"all"`
}

// Judge fills in the thresholds, the mixed-gang one pro-rated for the
// number of gangs run, and whether each is met.
func (r *Result) Judge() {
	r.Thresholds = Thresholds{
		MinDecisionsPerSec:   MinDecisionsPerSec,
		MaxP99DecisionMs:     MaxP99DecisionMs,
		MaxGang512P99Ms:      MaxGang512P99Ms,
		MaxMixedGangsSeconds: MaxMixedGangsSec * float64(r.MixedGangs) / 1000,
	}
	r.Pass = Pass{
		DecisionsPerSec: r.DecisionsPerSec >= r.Thresholds.MinDecisionsPerSec,
		P99Decision:     r.P99DecisionMs <= r.Thresholds.MaxP99DecisionMs,
		Gang512P99:      r.Gang512P99Ms <= r.Thresholds.MaxGang512P99Ms,
		MixedGangs:      r.MixedGangsSeconds <= r.Thresholds.MaxMixedGangsSeconds,
	}
	r.Pass.All = r.Pass.DecisionsPerSec && r.Pass.P99Decision && r.Pass.Gang512P99 && r.Pass.MixedGangs
}
