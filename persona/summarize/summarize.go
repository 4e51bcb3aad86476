package summarize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"sync"

	"golang.org/x/text/unicode/norm"

	"evident/internal/multimatch"
	"evident/llm"
	"evident/persona"
)

// Providers a Config may name (the cache key and the store keep it).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Config configures a Summarizer.
type Config struct {
	// Judge holds the cards and lexicon the request cites and runs the
	// checks. Required.
	Judge *persona.Judge
	// Client asks the model. Required. Wrap it with llm.Wrap for the call
	// policy (concurrency, timeout, retries, budget); when it reports an
	// llm.Tally (as *llm.Robust does), Tally includes its requests and
	// retries.
	Client llm.Client
	// Provider and Model name what answers (ProviderOpenAI,
	// ProviderAnthropic; the model name). They are part of the cache key.
	Provider, Model string
	// Cache keeps answers across calls and runs; nil means a MemoryCache
	// that lives as long as the Summarizer.
	Cache Cache
	// AnswerTokens caps each answer's length (0: 1024).
	AnswerTokens int
	// Cards are every character card of the run (batch.LoadCards): their
	// names, canon_entities and entity_roles entities are known names of
	// the proper-noun rule, so a summary naming another card's character is
	// caught. nil: only the record's own card is known.
	Cards []persona.Card
	// ExtraNames are more proper nouns the proper-noun rule should know,
	// e.g. every named_entities of the log (see the package doc).
	ExtraNames []string
}

// Summarizer rewrites summaries with a model under code's checks. It is safe
// for concurrent use.
type Summarizer struct {
	cfg       Config
	names     []string            // known names (package doc, "The proper-noun rule")
	nameM     *multimatch.Matcher // names, to find them in a summary in one pass
	cardTexts sync.Map            // character_id → *cardTexts (names.go)

	mu    sync.Mutex
	tally Tally
}

// New returns a Summarizer for cfg.
func New(cfg Config) (*Summarizer, error) {
	switch {
	case cfg.Judge == nil:
		return nil, errors.New("summarize: Config.Judge is required")
	case cfg.Client == nil:
		return nil, errors.New("summarize: Config.Client is required")
	case cfg.Provider == "" || cfg.Model == "":
		return nil, errors.New("summarize: Config.Provider and Config.Model are required")
	}
	if cfg.Cache == nil {
		cfg.Cache = NewMemoryCache()
	}
	if cfg.AnswerTokens <= 0 {
		cfg.AnswerTokens = 1024
	}
	names := knownNames(cfg.Judge, cfg.Cards, cfg.ExtraNames)
	nameM, err := multimatch.New(len(names), func(i int) string { return names[i] })
	if err != nil {
		return nil, fmt.Errorf("summarize: known names: %w", err)
	}
	return &Summarizer{cfg: cfg, names: names, nameM: nameM, tally: newTally()}, nil
}

// Summarize asks the model to rewrite rec's summary and evidence, checks the
// answer and, when it passes, puts the model's summary and evidence into rec;
// otherwise rec is left as the rules wrote it. It never changes another field
// of rec. cx is the check context of rec's turn (batch.Config.Summarize gives
// it). It has the signature of batch.Config.Summarize.
func (s *Summarizer) Summarize(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
	card, ok := s.cfg.Judge.Card(rec.CharacterID)
	if !ok || cx.Turn == nil {
		// persona/batch never offers such a record; say so rather than ask.
		out := persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: no turn or card", Detail: "the record's turn or card is unknown"}
		s.count(out, 0, 0, false)
		return out
	}
	req, err := s.request(rec, card, cx)
	if err != nil {
		out := persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: error", Detail: err.Error()}
		s.count(out, 0, 0, false)
		return out
	}
	key, err := s.key(req)
	if err != nil {
		out := persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: error", Detail: err.Error()}
		s.count(out, 0, 0, false)
		return out
	}

	ans, cached, err := s.cfg.Cache.Get(ctx, key)
	if err != nil {
		s.cacheError()
		cached = false
	}
	var inTok, outTok int
	if !cached {
		resp, err := s.cfg.Client.Complete(ctx, req)
		if err != nil {
			out := persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: " + failure(ctx, err), Detail: err.Error()}
			s.count(out, 0, 0, true)
			return out
		}
		ans = persona.CachedAnswer{Text: resp.Text, JSON: resp.JSON, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, Model: resp.Model}
		inTok, outTok = resp.InputTokens, resp.OutputTokens
		if err := s.cfg.Cache.Put(ctx, persona.CacheEntry{Key: key, PromptVersion: PromptVersion, Provider: s.cfg.Provider, Model: s.cfg.Model, Answer: ans}); err != nil {
			s.cacheError()
		}
	}
	cand, out := s.Decide(rec, cx, ans.JSON)
	out.Cached = cached
	if out.Source == persona.SummaryModel {
		rec.Summary, rec.Evidence = cand.Summary, cand.Evidence
	}
	s.count(out, inTok, outTok, !cached)
	return out
}

// Decide checks a model's answer (raw JSON; nil when the answer was not JSON)
// to the rule's record rule, as the package doc lays out, and returns the
// record to use with which summary it carries. On Source SummaryModel the
// returned record is rule with the model's summary and evidence; otherwise it
// is rule itself. rule is not modified.
func (s *Summarizer) Decide(rule *persona.Record, cx persona.Context, answer json.RawMessage) (persona.Record, persona.Summary) {
	discard := func(why, detail string) (persona.Record, persona.Summary) {
		return *rule, persona.Summary{Source: persona.SummaryRule, RejectedBy: "discarded: " + why, Detail: detail}
	}
	revert := func(why, detail string) (persona.Record, persona.Summary) {
		return *rule, persona.Summary{Source: persona.SummaryRule, RejectedBy: why, Detail: detail}
	}

	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(answer)) == 0 {
		return discard("malformed JSON", "the answer is not JSON")
	}
	if err := json.Unmarshal(answer, &obj); err != nil || obj == nil {
		return discard("malformed JSON", "the answer is not a JSON object")
	}
	// Check 1 on the value as the rules would read it: NFC and trimmed
	// (persona.ParseVerdict); the answer then carries that value, so that
	// the schema's enum and the comparison with the rule's verdict see it.
	var raw string
	verdict, ok := persona.Verdict(""), false
	if err := json.Unmarshal(obj["verdict"], &raw); err == nil {
		verdict, ok = persona.ParseVerdict(raw)
	}
	if !ok {
		return discard(persona.CheckVerdict.Label(), fmt.Sprintf("verdict %s is not one of the five", compact(obj["verdict"])))
	}
	if string(verdict) != raw {
		obj["verdict"], _ = json.Marshal(string(verdict)) // a string always marshals
		var err error
		if answer, err = json.Marshal(obj); err != nil {
			return discard("malformed JSON", err.Error())
		}
	}
	if err := persona.ValidateJSON(answer); err != nil {
		return discard("schema", err.Error())
	}
	var m persona.Record
	if err := json.Unmarshal(answer, &m); err != nil {
		return discard("schema", err.Error())
	}
	if m.Verdict != rule.Verdict {
		return discard("verdict differs", fmt.Sprintf("verdict %q, the rules gave %q", m.Verdict, rule.Verdict))
	}
	if field, ok := sameRuleFields(&m, rule); !ok {
		return discard("rule field differs", field+" differs from the rule's")
	}

	cand := *rule
	cand.Summary = norm.NFC.String(m.Summary)
	cand.Evidence = normEvidence(m.Evidence)
	for _, c := range s.cfg.Judge.Check(&cand, cx) {
		if !c.Pass {
			return revert(persona.CheckID(c.ID).Label(), c.Reason)
		}
	}
	if i, ok := keepsRows(cand.Evidence, rule.Evidence); !ok {
		e := rule.Evidence[i]
		return revert("rule evidence", fmt.Sprintf("the rule's evidence row %d (%s.%s) is missing or out of order", i, e.Source, e.Field))
	}
	card, _ := s.cfg.Judge.Card(rule.CharacterID)
	if name, ok := s.properNouns(&cand, card, cx.Turn); !ok {
		return revert("proper noun", fmt.Sprintf("%q is not in the evidence or the card", name))
	}
	return cand, persona.Summary{Source: persona.SummaryModel}
}

// sameRuleFields reports whether the identity and rule fields of m are the
// rule's (NFC-equal); else the first field that differs.
func sameRuleFields(m, r *persona.Record) (string, bool) {
	for _, f := range []struct {
		name string
		a, b string
	}{
		{"turn_id", m.TurnID, r.TurnID}, {"session_id", m.SessionID, r.SessionID},
		{"character_id", m.CharacterID, r.CharacterID}, {"model_id", m.ModelID, r.ModelID},
	} {
		if norm.NFC.String(f.a) != f.b {
			return f.name, false
		}
	}
	for _, f := range []struct {
		name string
		a, b *string
	}{
		{"rule_expected", m.RuleExpected, r.RuleExpected}, {"rule_observed", m.RuleObserved, r.RuleObserved},
		{"touched_term", m.TouchedTerm, r.TouchedTerm}, {"touched_topic", m.TouchedTopic, r.TouchedTopic},
		{"recall_target", m.RecallTarget, r.RecallTarget}, {"recall_source_turn", m.RecallSourceTurn, r.RecallSourceTurn},
	} {
		if (f.a == nil) != (f.b == nil) || (f.a != nil && norm.NFC.String(*f.a) != *f.b) {
			return f.name, false
		}
	}
	if (m.OffCanonEntities == nil) != (r.OffCanonEntities == nil) ||
		!slices.EqualFunc(m.OffCanonEntities, r.OffCanonEntities, func(a, b string) bool { return norm.NFC.String(a) == b }) {
		return "off_canon_entities", false
	}
	return "", true
}

// normEvidence NFC-normalises string values and turns whole JSON numbers into
// ints, as the rules write them.
func normEvidence(ev []persona.Evidence) []persona.Evidence {
	out := make([]persona.Evidence, len(ev))
	for i, e := range ev {
		switch v := e.Value.(type) {
		case string:
			e.Value = norm.NFC.String(v)
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				e.Value = int(v)
			}
		}
		e.Field = norm.NFC.String(e.Field)
		out[i] = e
	}
	return out
}

// keepsRows reports whether every row of rule appears in ev, in order (ev
// may have more rows between and after them); else the index of the first
// rule row not found.
func keepsRows(ev, rule []persona.Evidence) (int, bool) {
	j := 0
	for i, r := range rule {
		for j < len(ev) && !sameRow(ev[j], r) {
			j++
		}
		if j == len(ev) {
			return i, false
		}
		j++
	}
	return 0, true
}

func sameRow(a, b persona.Evidence) bool {
	if a.Source != b.Source || a.Field != b.Field || a.Agg != b.Agg {
		return false
	}
	return persona.SameEvidenceValue(a.Value, b.Value)
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(missing)"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// failure names why a call brought no answer, for "failed: …".
func failure(ctx context.Context, err error) string {
	var ae *llm.APIError
	switch {
	case errors.Is(err, llm.ErrBudget):
		return "budget"
	case errors.Is(err, llm.ErrTimeout):
		return "timeout"
	case errors.Is(err, llm.ErrRefused):
		return "refused"
	case errors.Is(err, llm.ErrEmpty):
		return "empty answer"
	case errors.As(err, &ae):
		return fmt.Sprintf("http %d", ae.StatusCode)
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "connection"
	}
	return "error"
}

// key is the content address of a request: sha256 over the prompt version,
// provider, model and the request as JSON, each followed by a NUL byte.
func (s *Summarizer) key(req llm.Request) (string, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("summarize: encode request: %w", err)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(PromptVersion), []byte(s.cfg.Provider), []byte(s.cfg.Model), b} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
