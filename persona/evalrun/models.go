package evalrun

import (
	"slices"

	"evident/persona"
)

// ModelReport compares models on shared prompts: prompts (chat_turn.prompt_id)
// answered by at least two models (CompareModels). A reply "mismatches" when
// its verdict is not 설정대로 말함.
type ModelReport struct {
	// Prompts is the number of shared prompts.
	Prompts int `json:"prompts"`
	// Models holds one row per model that answered a shared prompt, sorted by
	// model_id.
	Models []ModelRate `json:"models"`
	// Pairs holds one row per pair of Models (ModelA < ModelB), in order.
	Pairs []ModelPair `json:"pairs"`
}

// ModelRate is one model's mismatch rate over the shared prompts it answered.
type ModelRate struct {
	Model      string   `json:"model"`
	N          int      `json:"n"`          // shared prompts the model answered (≥ 1)
	Mismatches int      `json:"mismatches"` // of those, replies not 설정대로 말함
	Rate       float64  `json:"rate"`       // Mismatches/N
	Interval   Interval `json:"interval"`   // 95 % Wilson interval of Rate
}

// ModelPair is the paired comparison of two models on the shared prompts both
// answered: the 2×2 table of (A mismatched?, B mismatched?) and McNemar's
// exact p-value on its discordant cells B and C.
type ModelPair struct {
	ModelA  string  `json:"model_a"` // model_id of the first model (sorts first)
	ModelB  string  `json:"model_b"` // model_id of the second model
	N       int     `json:"n"`       // prompts both answered
	Both    int     `json:"both"`    // both mismatched
	Neither int     `json:"neither"` // both kept to the card
	B       int     `json:"b"`       // only ModelA mismatched
	C       int     `json:"c"`       // only ModelB mismatched
	P       float64 `json:"p"`       // McNemarExact(B, C)
}

// CompareModels compares models on shared prompts. promptOf maps turn_id to
// prompt_id (from the chat_turn table; records do not carry it); records whose
// turn_id has no prompt ("" or absent) and records with an invalid verdict are
// skipped. When one model answered the same prompt more than once, its first
// record (in recs order) counts. Prompts answered by a single model are left
// out.
func CompareModels(recs []persona.Record, promptOf map[string]string) ModelReport {
	type answers = map[string]bool // model → mismatched
	var prompts []answers
	for _, sp := range SharedPrompts(recs, promptOf, "") {
		a := answers{}
		for m, i := range sp.First {
			a[m] = recs[i].Verdict != persona.Kept
		}
		prompts = append(prompts, a)
	}
	rep := ModelReport{Models: []ModelRate{}, Pairs: []ModelPair{}}
	rates := map[string]*ModelRate{}
	var shared []answers
	for _, a := range prompts {
		shared = append(shared, a)
		for m, off := range a {
			mr, ok := rates[m]
			if !ok {
				mr = &ModelRate{Model: m}
				rates[m] = mr
			}
			mr.N++
			if off {
				mr.Mismatches++
			}
		}
	}
	rep.Prompts = len(shared)
	var models []string
	for m := range rates {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		mr := rates[m]
		mr.Rate = float64(mr.Mismatches) / float64(mr.N)
		mr.Interval, _ = Wilson(mr.Mismatches, mr.N) // N ≥ 1: always defined
		rep.Models = append(rep.Models, *mr)
	}
	for i, a := range models {
		for _, b := range models[i+1:] {
			pr := ModelPair{ModelA: a, ModelB: b}
			for _, ans := range shared {
				offA, okA := ans[a]
				offB, okB := ans[b]
				if !okA || !okB {
					continue
				}
				pr.N++
				switch {
				case offA && offB:
					pr.Both++
				case offA:
					pr.B++
				case offB:
					pr.C++
				default:
					pr.Neither++
				}
			}
			pr.P = McNemarExact(pr.B, pr.C)
			rep.Pairs = append(rep.Pairs, pr)
		}
	}
	return rep
}

// PromptsOf maps each turn's turn_id to its prompt_id, leaving out turns
// without one: the promptOf argument of CompareModels.
func PromptsOf(turns []persona.Turn) map[string]string {
	m := make(map[string]string, len(turns))
	for _, t := range turns {
		if t.PromptID != "" {
			m[t.TurnID] = t.PromptID
		}
	}
	return m
}
