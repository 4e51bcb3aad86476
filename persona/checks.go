package persona

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/text/unicode/norm"

	"evident/persona/speech"
)

// CheckNames are the seed's ten automatic checks, in the seed's order (seed
// 000 "[자동 검증]"; spec persona.md "Automatic checks"). Index i holds check
// i+1.
var CheckNames = [10]string{
	"verdict 가 다섯 값 가운데 하나",
	"필수 일곱 칸이 모두 채워짐",
	"말투를 reply_text 에서 다시 뽑아 맞음",
	"off_canon_entities 재계산 일치",
	"touched_term·touched_topic 재계산 일치",
	"recall_target·recall_source_turn 재계산 일치",
	"null 처리(named_entities·first_person)",
	"evidence field 가 실제 컬럼",
	"evidence value 가 인용한 칸과 글자 그대로 같음",
	"summary 가 존댓말 한 문장",
}

// CheckID names one of the ten automatic checks by its seed number (1..10);
// CheckNames[id-1] is its name. The constants are the one place the numbers
// live: the checks, the summarizer's "check N" reasons and the reports use
// them.
type CheckID int

// The ten automatic checks, in the seed's order.
const (
	CheckVerdict       CheckID = iota + 1 // verdict is one of the five
	CheckRequired                         // the seven required fields are filled
	CheckStyle                            // rule_observed re-extracted from reply_text
	CheckOffCanon                         // off_canon_entities recomputed
	CheckTouched                          // touched_term and touched_topic recomputed
	CheckRecall                           // recall_target and recall_source_turn recomputed
	CheckNulls                            // null handling (named_entities, first_person)
	CheckEvidenceField                    // evidence fields are real columns
	CheckEvidenceValue                    // evidence values are verbatim the cited cell
	CheckSummary                          // summary is one 존댓말 sentence
)

// Name is the check's name (CheckNames).
func (id CheckID) Name() string { return CheckNames[id-1] }

// Label is how reasons and tallies name the check: "check 8".
func (id CheckID) Label() string { return fmt.Sprintf("check %d", id) }

// CheckResult is the outcome of one automatic check on one record. ID is 1..10;
// Reason says why it failed ("" when it passed).
type CheckResult struct {
	ID     int
	Pass   bool
	Reason string
}

// Context is what the checks may read besides the record: the turn it is
// about (nil when the record names an unknown turn), that turn's accepted
// input position, the history for the recall rule, and a lookup of other turns
// by turn_id (for evidence citing the recall source turn; may be nil).
//
// Findings, when not nil, are the rule findings of Turn at Pos with History
// as this judge computed them (Judge.JudgeFindings): Check compares the
// record with them instead of computing them again. They are a function of
// the turn, its position, the history and the judge's cards and lexicon, so
// the outcome is the same; nil (a record from another system, a file being
// checked) makes Check compute them.
type Context struct {
	Turn     *Turn
	Pos      int
	History  History
	TurnByID func(id string) (*Turn, bool)
	Findings *Findings
}

// Check runs the ten automatic checks on record r (ours or another system's)
// and returns one result per check. The rules are recomputed with the judge's
// cards, lexicon and profile; a record whose turn or card is unknown fails the
// checks that need them, with that reason. Check never panics on odd records.
func (j *Judge) Check(r *Record, cx Context) [10]CheckResult {
	var res [10]CheckResult
	for i := range res {
		res[i] = CheckResult{ID: i + 1, Pass: true}
	}
	fail := func(id CheckID, format string, a ...any) {
		if res[id-1].Pass {
			res[id-1] = CheckResult{ID: int(id), Reason: fmt.Sprintf(format, a...)}
		}
	}

	// 1. The verdict is one of the five.
	if !r.Verdict.Valid() {
		fail(CheckVerdict, "verdict %q is not one of the five", string(r.Verdict))
	}
	// 2. The seven required fields are filled.
	for _, kv := range [][2]string{{"turn_id", r.TurnID}, {"session_id", r.SessionID},
		{"character_id", r.CharacterID}, {"model_id", r.ModelID}, {"verdict", string(r.Verdict)}, {"summary", r.Summary}} {
		if strings.TrimSpace(kv[1]) == "" {
			fail(CheckRequired, "%s is empty", kv[0])
		}
	}
	if len(r.Evidence) == 0 {
		fail(CheckRequired, "evidence is empty")
	}
	// 8. Every evidence field is a real column of its table.
	for i, e := range r.Evidence {
		if cols := columnsOf(e.Source); cols == nil {
			fail(CheckEvidenceField, "evidence[%d]: source %q is not a table", i, e.Source)
		} else if !slices.Contains(cols, e.Field) {
			fail(CheckEvidenceField, "evidence[%d]: %s has no column %q", i, e.Source, e.Field)
		}
		switch e.Agg {
		case "", AggCount, AggSum, AggAvg, AggMin, AggMax:
		default:
			fail(CheckEvidenceField, "evidence[%d]: agg %q is not an aggregate", i, e.Agg)
		}
	}
	// 10. The summary is one 존댓말 sentence (words quoted in 「」 are opaque).
	if ok, why := j.oneJondaemalSentence(r.Summary); !ok {
		fail(CheckSummary, "%s", why)
	}

	t := cx.Turn
	c, cardOK := j.cards[r.CharacterID]
	switch {
	case t == nil:
		for _, id := range []CheckID{CheckStyle, CheckOffCanon, CheckTouched, CheckRecall, CheckNulls, CheckEvidenceValue} {
			fail(id, "turn %q is not in the turn log", r.TurnID)
		}
		return res
	case !cardOK:
		for _, id := range []CheckID{CheckStyle, CheckOffCanon, CheckTouched, CheckRecall, CheckNulls, CheckEvidenceValue} {
			fail(id, "character_id %q has no card", r.CharacterID)
		}
		return res
	}
	if t.SessionID != r.SessionID || t.CharacterID != r.CharacterID || t.ModelID != r.ModelID {
		fail(CheckRequired, "session_id/character_id/model_id differ from turn %q in the log", t.TurnID)
	}
	var f Findings
	if cx.Findings != nil {
		f = *cx.Findings
	} else {
		f = j.find(t, cx.Pos, c, cx.History)
	}
	label := func(id CheckID, v Verdict) {
		if (r.Verdict == v) != (f.Verdict == v) {
			fail(id, "verdict is %q but the rules give %q", r.Verdict, f.Verdict)
		}
	}

	// 3. Speech re-extracted from reply_text agrees with rule_observed/verdict.
	if !eqPtr(r.RuleObserved, f.RuleObserved) {
		fail(CheckStyle, "rule_observed is %s, re-extracted %s", show(r.RuleObserved), show(f.RuleObserved))
	}
	if !eqPtr(r.RuleExpected, &f.RuleExpected) {
		fail(CheckStyle, "rule_expected is %s, the card gives %q", show(r.RuleExpected), f.RuleExpected)
	}
	label(CheckStyle, SpeechOff)
	// 4. off_canon_entities recomputed.
	if (r.OffCanonEntities == nil) != (f.OffCanon == nil) || !slices.Equal(nfcAll(r.OffCanonEntities), f.OffCanon) {
		fail(CheckOffCanon, "off_canon_entities is %s, recomputed %s", showList(r.OffCanonEntities), showList(f.OffCanon))
	}
	label(CheckOffCanon, OffCanon)
	// 5. touched_term / touched_topic recomputed.
	wantTerm, wantTopic := (*string)(nil), (*string)(nil)
	rows := j.lexicon.rows
	if f.ForbiddenRow >= 0 {
		wantTerm, wantTopic = &rows[f.ForbiddenRow].Term, &rows[f.ForbiddenRow].Topic
	} else if f.TermRow >= 0 {
		wantTerm = &rows[f.TermRow].Term
	}
	if !eqPtr(r.TouchedTerm, wantTerm) || !eqPtr(r.TouchedTopic, wantTopic) {
		fail(CheckTouched, "touched_term/topic are %s/%s, recomputed %s/%s", show(r.TouchedTerm), show(r.TouchedTopic), show(wantTerm), show(wantTopic))
	}
	label(CheckTouched, ForbiddenTopic)
	// 6. recall recomputed.
	var wantTarget, wantSource *string
	if f.RecallFired {
		wantTarget, wantSource = &f.RecallEntity, &f.RecallSource.TurnID
	}
	if !eqPtr(r.RecallTarget, wantTarget) || !eqPtr(r.RecallSourceTurn, wantSource) {
		fail(CheckRecall, "recall_target/source are %s/%s, recomputed %s/%s", show(r.RecallTarget), show(r.RecallSourceTurn), show(wantTarget), show(wantSource))
	}
	label(CheckRecall, RecallFailed)
	// 7. Null handling.
	if t.NamedEntities == nil && r.OffCanonEntities != nil {
		fail(CheckNulls, "named_entities is null but off_canon_entities is not")
	}
	if t.NamedEntities != nil && r.OffCanonEntities == nil {
		fail(CheckNulls, "named_entities is a list but off_canon_entities is null")
	}
	if f.SpeechSkipped && r.RuleObserved != nil {
		fail(CheckNulls, "no sentence to read but rule_observed is %q", *r.RuleObserved)
	}
	if t.FirstPerson == nil && r.RuleObserved != nil && strings.Contains(*r.RuleObserved, " · ") {
		fail(CheckNulls, "first_person is null but rule_observed %q carries one", *r.RuleObserved)
	}
	if (t.NamedEntities == nil || t.FirstPerson == nil || f.SpeechSkipped) && (r.Hedge == nil || *r.Hedge == "") {
		fail(CheckNulls, "a check was skipped but hedge is empty")
	}
	// 9. Every evidence value equals the cited cell.
	var src *Turn
	if r.RecallSourceTurn != nil && cx.TurnByID != nil {
		src, _ = cx.TurnByID(*r.RecallSourceTurn)
	}
	ci := citer{j: j, c: c, t: t, src: src}
	for i, e := range r.Evidence {
		if ok, why := ci.cited(e); !ok {
			fail(CheckEvidenceValue, "evidence[%d] %s.%s: %s", i, e.Source, e.Field, why)
		}
	}
	return res
}

func columnsOf(s Source) []string {
	switch s {
	case SourceTurn:
		return TurnColumns
	case SourceCard:
		return CardColumns
	case SourceLexicon:
		return LexiconColumns
	}
	return nil
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return norm.NFC.String(*a) == *b
}

func show(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

func showList(l []string) string {
	if l == nil {
		return "null"
	}
	return fmt.Sprintf("%q", l)
}

func nfcAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = norm.NFC.String(s)
	}
	return out
}

// summaryMemo remembers check 10's answer for the summaries the judge saw
// last: summaries come from a few templates (7,450 distinct among 300,000
// records of bench/gen's log), and reading each again was a third of the
// checks' CPU at judge time. A fixed table of slots, each holding one
// summary and its answer, replaced by the newest summary hashing there:
// bounded (summaryMemoSlots entries) and safe for the judge's workers
// without a lock; a hit compares the whole summary, so it never answers
// for another text.
type summaryMemo struct {
	seed  maphash.Seed
	slots [summaryMemoSlots]atomic.Pointer[memoEntry]
}

const summaryMemoSlots = 4096

type memoEntry struct {
	summary string
	ok      bool
	why     string
}

// oneJondaemalSentence implements check 10 (through j.memo when set).
func (j *Judge) oneJondaemalSentence(s string) (bool, string) {
	if j.memo == nil {
		return j.readSummary(s)
	}
	slot := &j.memo.slots[maphash.String(j.memo.seed, s)%summaryMemoSlots]
	if e := slot.Load(); e != nil && e.summary == s {
		return e.ok, e.why
	}
	ok, why := j.readSummary(s)
	slot.Store(&memoEntry{summary: s, ok: ok, why: why})
	return ok, why
}

// readSummary is check 10 itself: outside 「」, one sentence, ending in
// 존댓말 by the judge's profile.
func (j *Judge) readSummary(s string) (bool, string) {
	var b strings.Builder
	depth := 0
	for _, r := range norm.NFC.String(s) {
		switch {
		case r == '「':
			depth++
			if depth == 1 {
				b.WriteRune(r)
			}
		case r == '」' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteRune(r)
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	rd := j.profile.Read(b.String())
	switch {
	case len(speech.Split(b.String())) != 1:
		return false, fmt.Sprintf("summary has %d sentences, want one", len(speech.Split(b.String())))
	case len(rd.Sentences) != 1 || rd.Polite != 1:
		return false, "summary does not end in 존댓말"
	}
	return true, ""
}

// cited reports whether evidence row e equals a cell it may cite: a cell of
// the turn (or of the recall source turn), of the turn's card, or of a
// lexicon row. A list cell is cited one element at a time (entity_roles: a
// role or an entity); agg count is recomputed (sentences of a text cell,
// elements of a list cell, rows of the lexicon). Each cell is read once per
// record (citer.cellOf), so the work is linear in the record and its cells
// however many rows cite them.
func (ci *citer) cited(e Evidence) (bool, string) {
	if e.Agg != "" {
		if e.Agg != AggCount {
			return false, fmt.Sprintf("agg %q over a non-numeric column cannot be recomputed", e.Agg)
		}
		n, ok := number(e.Value)
		if !ok {
			return false, "agg count needs a number"
		}
		want := -1
		switch e.Source {
		case SourceTurn:
			want = ci.cellOf(SourceTurn, e.Field, ci.t).counted(ci.j.profile)
		case SourceCard:
			want = ci.cellOf(SourceCard, e.Field, nil).counted(ci.j.profile)
		case SourceLexicon:
			want = len(ci.j.lexicon.rows)
		}
		if want < 0 || n != float64(want) {
			return false, fmt.Sprintf("count is %v, recomputed %d", e.Value, want)
		}
		return true, ""
	}
	var hit bool
	switch e.Source {
	case SourceTurn:
		hit = ci.cellOf(SourceTurn, e.Field, ci.t).has(e.Value) ||
			ci.src != nil && ci.cellOf(SourceTurn, e.Field, ci.src).has(e.Value)
	case SourceCard, SourceLexicon:
		hit = ci.cellOf(e.Source, e.Field, nil).has(e.Value)
	}
	if hit {
		return true, ""
	}
	return false, fmt.Sprintf("value %v is not in the cited cell", e.Value)
}

// citer answers check 9 for one record: the turn, the recall source turn
// (nil when none) and the card, with each cell read once into a citeCell.
// The card's and the lexicon's cells of more than smallCell values are kept
// by the judge for every record (built on first use).
type citer struct {
	j      *Judge
	c      *cardRules
	t, src *Turn
	memo   []citeEntry // at most one per column of each table and turn
}

type citeEntry struct {
	source Source
	field  string
	turn   *Turn
	cell   *citeCell
}

// smallCell is the most values of a cell compared one by one; a larger
// cell's values are a set, and the card's and the lexicon's are kept by the
// judge across records.
const smallCell = 16

// citeCell is one cell as check 9 compares with it: the values it may be
// cited as (SameEvidenceValue: strings verbatim or after NFC, nil for a null
// cell, booleans) and how to count it for agg count. A value is first looked
// for verbatim (all text is NFC before any rule, so a cited value usually is
// the cell's bytes) and only then after NFC, against the NFC of the cell's
// strings, computed once on that first need.
type citeCell struct {
	strs  []string            // the cell's strings as written, when at most smallCell
	set   map[string]struct{} // the same, when more
	null  bool
	bools []bool
	count int     // -1 when the cell has no count
	text  *string // a text cell, whose count is its sentences (counted)
	once  sync.Once
	nfc   map[string]struct{} // NFC of every string of the cell, built once
	nonce sync.Once
}

var emptyCell = &citeCell{count: -1}

// has reports whether v is SameEvidenceValue to one of the cell's values.
// It costs O(len(v)) for a cell read before.
func (cc *citeCell) has(v any) bool {
	switch x := v.(type) {
	case nil:
		return cc.null
	case string:
		if slices.Contains(cc.strs, x) {
			return true
		}
		if _, ok := cc.set[x]; ok {
			return true
		}
		if len(cc.strs) == 0 && len(cc.set) == 0 {
			return false
		}
		cc.nonce.Do(func() {
			cc.nfc = make(map[string]struct{}, len(cc.strs)+len(cc.set))
			for _, s := range cc.strs {
				cc.nfc[norm.NFC.String(s)] = struct{}{}
			}
			for s := range cc.set {
				cc.nfc[norm.NFC.String(s)] = struct{}{}
			}
		})
		_, ok := cc.nfc[norm.NFC.String(x)]
		return ok
	case bool:
		return slices.Contains(cc.bools, x)
	}
	return false // numbers: no cell holds one
}

// counted is the cell's agg count: a text cell's sentences as the judge's
// profile p reads them (counted once, on the first agg row that asks), a
// list cell's elements, -1 for another cell.
func (cc *citeCell) counted(p *speech.Profile) int {
	if cc.text != nil {
		cc.once.Do(func() { cc.count = p.Count(*cc.text) })
	}
	return cc.count
}

// cellOf returns the citeCell of field of source (turn t for the chat_turn
// table), built on first use. A field that is not a column of source is an
// empty cell (check 8 reports it).
func (ci *citer) cellOf(source Source, field string, t *Turn) *citeCell {
	if !slices.Contains(columnsOf(source), field) {
		return emptyCell
	}
	for _, e := range ci.memo {
		if e.source == source && e.field == field && e.turn == t {
			return e.cell
		}
	}
	var cc *citeCell
	switch source {
	case SourceTurn:
		cc = turnCells(t, field).cell()
	case SourceCard:
		cc = ci.c.kept(field, func() *citeCell { return cardCells(&ci.c.Card, field).cell() })
	case SourceLexicon:
		cc = ci.j.lexCell(field)
	}
	ci.memo = append(ci.memo, citeEntry{source, field, t, cc})
	return cc
}

// kept returns the card's citeCell of field, kept across records when it is
// large.
func (c *cardRules) kept(field string, build func() *citeCell) *citeCell {
	if v, ok := c.cite.Load(field); ok {
		return v.(*citeCell)
	}
	cc := build()
	if cc.set != nil {
		v, _ := c.cite.LoadOrStore(field, cc)
		cc = v.(*citeCell)
	}
	return cc
}

// lexCell returns the citeCell of the lexicon's field (every row's term or
// topic), kept across records when it is large.
func (j *Judge) lexCell(field string) *citeCell {
	if v, ok := j.lexCite.Load(field); ok {
		return v.(*citeCell)
	}
	var vs []string
	for _, row := range j.lexicon.rows {
		if field == "term" {
			vs = append(vs, row.Term)
		} else {
			vs = append(vs, row.Topic)
		}
	}
	cc := cells{strs: vs, list: -1}.cell()
	if cc.set != nil {
		v, _ := j.lexCite.LoadOrStore(field, cc)
		cc = v.(*citeCell)
	}
	return cc
}

// cells are the values one cell may be cited as, and how to count it.
type cells struct {
	values []any        // a scalar cell's value (nil for null)
	strs   []string     // a list cell's elements
	roles  []EntityRole // entity_roles: each role and entity
	text   *string      // a text cell (count = sentences)
	list   int          // elements of a list cell, -1 when not a list
}

// cell reads cs once into a citeCell.
func (cs cells) cell() *citeCell {
	cc := &citeCell{count: -1, text: cs.text}
	if cs.text == nil && cs.list >= 0 {
		cc.count = cs.list
	}
	strs := cs.strs
	if len(cs.values) > 0 || len(cs.roles) > 0 {
		strs = slices.Clip(strs)
		for _, v := range cs.values {
			switch x := v.(type) {
			case nil:
				cc.null = true
			case string:
				strs = append(strs, x)
			case bool:
				cc.bools = append(cc.bools, x)
			}
		}
		for _, er := range cs.roles {
			strs = append(strs, er.Role, er.Entity)
		}
	}
	if len(strs) <= smallCell {
		cc.strs = strs
		return cc
	}
	cc.set = make(map[string]struct{}, len(strs))
	for _, s := range strs {
		cc.set[s] = struct{}{}
	}
	return cc
}

func textCell(s *string) cells {
	return cells{values: []any{cell(s)}, text: s, list: -1}
}

func listCell(l []string, null bool) cells {
	if null {
		return cells{values: []any{nil}, list: -1}
	}
	return cells{strs: l, list: len(l)}
}

func optional(s string) cells {
	if s == "" {
		return cells{values: []any{nil}, list: -1}
	}
	return textCell(&s)
}

func turnCells(t *Turn, field string) cells {
	switch field {
	case "turn_id":
		return textCell(&t.TurnID)
	case "session_id":
		return textCell(&t.SessionID)
	case "character_id":
		return textCell(&t.CharacterID)
	case "model_id":
		return textCell(&t.ModelID)
	case "user_message":
		return textCell(t.UserMessage)
	case "reply_text":
		return textCell(t.ReplyText)
	case "first_person":
		return textCell(t.FirstPerson)
	case "honorific_level":
		return textCell(t.HonorificLevel)
	case "named_entities":
		return listCell(t.NamedEntities, t.NamedEntities == nil)
	case "user_asked_recall":
		return cells{values: []any{t.UserAskedRecall}, list: -1}
	case "created_at":
		return optional(t.CreatedAt)
	case "prompt_id":
		return optional(t.PromptID)
	}
	return cells{list: -1}
}

func cardCells(c *Card, field string) cells {
	switch field {
	case "character_id":
		return textCell(&c.CharacterID)
	case "name":
		return textCell(&c.Name)
	case "honorific_rule":
		return textCell(&c.HonorificRule)
	case "first_person":
		return textCell(&c.FirstPerson)
	case "description":
		return optional(c.Description)
	case "public":
		return cells{values: []any{c.Public}, list: -1}
	case "canon_entities":
		return listCell(c.CanonEntities, false)
	case "forbidden_topics":
		return listCell(c.ForbiddenTopics, false)
	case "entity_roles":
		return cells{roles: c.EntityRoles, list: len(c.EntityRoles)}
	}
	return cells{list: -1}
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
