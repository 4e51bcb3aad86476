package evalrun

import (
	"slices"

	"evident/persona"
)

// SharedPrompt is one prompt (chat_turn.prompt_id) answered by at least two
// models, with each model's first record for it.
type SharedPrompt struct {
	PromptID string
	// Models in the order they first answered the prompt (recs order).
	Models []string
	// First maps each model to the index in recs of its first record for
	// the prompt: when a model answered a prompt more than once, that first
	// record counts (CompareModels and FindDisagreements alike).
	First map[string]int
}

// SharedPrompts groups recs by prompt and keeps the prompts answered by at
// least two models, in the order the prompts first appear. promptOf maps
// turn_id to prompt_id (PromptsOf); records whose turn has no prompt, whose
// verdict is not one of persona.Verdicts, or (character ≠ "") of another
// character are skipped.
func SharedPrompts(recs []persona.Record, promptOf map[string]string, character string) []SharedPrompt {
	byPrompt := map[string]*SharedPrompt{}
	var order []string
	for i, r := range recs {
		p := promptOf[r.TurnID]
		if p == "" || !r.Verdict.Valid() || (character != "" && r.CharacterID != character) {
			continue
		}
		sp := byPrompt[p]
		if sp == nil {
			sp = &SharedPrompt{PromptID: p, First: map[string]int{}}
			byPrompt[p] = sp
			order = append(order, p)
		}
		if _, dup := sp.First[r.ModelID]; !dup {
			sp.First[r.ModelID] = i
			sp.Models = append(sp.Models, r.ModelID)
		}
	}
	var out []SharedPrompt
	for _, p := range order {
		if sp := byPrompt[p]; len(sp.Models) >= 2 {
			out = append(out, *sp)
		}
	}
	return out
}

// Disagreements are the shared prompts whose models' first records do not
// all have the same verdict (the screen's "models disagree" page and the run
// page's count).
type Disagreements struct {
	// Shared is the number of shared prompts considered.
	Shared int
	// Models are the models of any disagreeing prompt, sorted by model_id.
	Models []string
	// Prompts are the disagreeing prompts, in the order they first appear.
	Prompts []SharedPrompt
}

// FindDisagreements lists the prompts of SharedPrompts(recs, promptOf,
// character) whose verdicts differ.
func FindDisagreements(recs []persona.Record, promptOf map[string]string, character string) Disagreements {
	shared := SharedPrompts(recs, promptOf, character)
	out := Disagreements{Shared: len(shared)}
	models := map[string]bool{}
	for _, sp := range shared {
		first := recs[sp.First[sp.Models[0]]].Verdict
		differ := slices.ContainsFunc(sp.Models[1:], func(m string) bool { return recs[sp.First[m]].Verdict != first })
		if !differ {
			continue
		}
		for _, m := range sp.Models {
			models[m] = true
		}
		out.Prompts = append(out.Prompts, sp)
	}
	for m := range models {
		out.Models = append(out.Models, m)
	}
	slices.Sort(out.Models)
	return out
}

// VerdictChange is one turn judged differently by two runs: From and To
// index its record in the earlier and the later run's records.
type VerdictChange struct {
	TurnID        string
	Before, After persona.Verdict
	From, To      int
}

// CompareRuns lists, in the later run's record order, the turns (by turn_id)
// both runs judged whose verdicts differ. When a run holds several records
// for one turn_id, its first counts for the earlier run; every record of the
// later run is compared.
func CompareRuns(earlier, later []persona.Record) []VerdictChange {
	first := make(map[string]int, len(earlier))
	for i, r := range earlier {
		if _, dup := first[r.TurnID]; !dup {
			first[r.TurnID] = i
		}
	}
	var out []VerdictChange
	for j, r := range later {
		i, ok := first[r.TurnID]
		if !ok || earlier[i].Verdict == r.Verdict {
			continue
		}
		out = append(out, VerdictChange{TurnID: r.TurnID, Before: earlier[i].Verdict, After: r.Verdict, From: i, To: j})
	}
	return out
}
