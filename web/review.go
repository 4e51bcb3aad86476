package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	queues "evident/persona/review"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

// The review queues (package doc, "Review queues"): three pages per run and
// the POST actions behind their buttons.

const (
	whoCookie  = "evident_who"
	defaultWho = "creator"
	maxWho     = 40 // runes
)

// queuePages are the three queues in the order of their tabs: URL segment,
// store queue, tab label.
var queuePages = []struct {
	Slug  string
	Queue store.Queue
	Label string
}{
	{"forbidden", store.QueueForbidden, "금지 소재 표본"},
	{"offcanon", store.QueueOffCanon, "세계관 밖 이름"},
	{"endings", store.QueueEnding, "섞인 말투와 어미"},
}

func slugOf(q store.Queue) string {
	for _, p := range queuePages {
		if p.Queue == q {
			return p.Slug
		}
	}
	return ""
}

// decisionLabels: what each stored value reads as on screen, and its chip.
var decisionLabels = map[store.Queue]map[string][2]string{
	store.QueueForbidden: {queues.ForbiddenConfirm: {"이 캐릭터에게 실제 문제", "v-forbidden"}, queues.ForbiddenReject: {"문제 아님", "v-kept"}},
	store.QueueOffCanon:  {queues.CanonAdd: {"카드 설정에 더함", "v-kept"}, queues.CanonBlock: {"막을 이름", "v-forbidden"}},
	store.QueueEnding: {queues.EndingAdd: {"어미 목록에 더함", "v-kept"}, queues.EndingSkip: {"넣지 않음", "v-speech"},
		queues.EndingSeen: {"읽어 봄", "v-seen"}},
}

// whoOf is the reviewer's name: the form's who field, else the cookie, else
// "creator". Control characters are dropped and the name is cut to maxWho.
func whoOf(r *http.Request, form string) string {
	who := form
	if who == "" {
		if c, err := r.Cookie(whoCookie); err == nil {
			who, _ = url.QueryUnescape(c.Value)
		}
	}
	who = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || c == utf8.RuneError {
			return -1
		}
		return c
	}, who)
	who = strings.TrimSpace(who)
	if utf8.RuneCountInString(who) > maxWho {
		who = strings.TrimSpace(string([]rune(who)[:maxWho]))
	}
	if who == "" {
		return defaultWho
	}
	return who
}

func rememberWho(w http.ResponseWriter, r *http.Request, who string) {
	http.SetCookie(w, &http.Cookie{Name: whoCookie, Value: url.QueryEscape(who), Path: "/", MaxAge: 400 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

// ---- views -----------------------------------------------------------------

type reviewPage struct {
	Run        runHead
	Slug       string
	Tabs       []reviewTab
	Who        string
	Back       string // this page, for the who form
	Action     string // POST target of the decision forms
	UndoURL    string
	ExportURL  string
	Why        string // the queue cannot work on this run, and why
	Changes    *changeView
	Forbidden  *forbiddenView
	OffCanon   *offCanonView
	Endings    *endingsView
	Log        []logRow
	LogEntries int
}

type reviewTab struct {
	Label, URL string
	Count      int
	Current    bool
}

type decisionView struct {
	ID                     int64
	Value, Label, Class    string
	Who, At, Note          string
	Undone                 bool
	UndoneBy, UndoneAt     string
	Key, KeyLabel, KeyLink string
}

type logRow = decisionView

func labelled(d store.Decision) decisionView {
	v := decisionView{ID: d.ID, Value: d.Value, Label: d.Value, Who: d.Who, At: localTime(d.At), Note: d.Note, Key: d.Key,
		Undone: d.UndoneAt != nil, UndoneBy: d.UndoneBy}
	if l, ok := decisionLabels[d.Queue][d.Value]; ok {
		v.Label, v.Class = l[0], l[1]
	}
	if d.UndoneAt != nil {
		v.UndoneAt = localTime(*d.UndoneAt)
	}
	return v
}

// changeView compares this run with the run a review decision judged again.
type changeView struct {
	From, To   int64
	FromURL    string
	Counts     []countChange
	Turns      []turnChange
	More       int
	NoneDiffer bool
}

type countChange struct {
	Verdict, Class string
	Before, After  int
	Changed        bool
}

type turnChange struct {
	TurnID, Link        string
	Before, After       string
	BeforeCls, AfterCls string
	Character, ModelID  string
	Summary             string
}

type forbiddenView struct {
	Total, Decided int
	Items          []forbiddenItem
}

type forbiddenItem struct {
	TurnID, Anchor, Link               string
	Character, CharacterID, ModelID    string
	Summary, Term, Topic, CardForbids  string
	Reply                              []Segment
	ReplyNull                          bool
	Decision                           *decisionView
	ConfirmValue, RejectValue, Current string
}

type offCanonView struct {
	Names, Turns int
	Groups       []nameGroup
	Decided      []nameDecided
	AddValue     string
	BlockValue   string
}

type nameGroup struct {
	Name, CharacterID, Character, Anchor string
	Count                                int
	ByVerdict                            []verdictCount
	Examples                             []exampleTurn
	More                                 int
	Decision                             *decisionView
}

type exampleTurn struct {
	TurnID, Link, Verdict, Class string
	Reply                        []Segment
}

// nameDecided is an active decision about a name that no longer shows in
// this run (added to the card, so no longer off-canon).
type nameDecided struct {
	Name, CharacterID, Character string
	InCanon                      bool
	Decision                     decisionView
}

type endingsView struct {
	Profile, Endings, Exceptions string
	Reviewed                     []reviewedEnding
	Mixed                        int
	Sample                       []mixedReply
	Candidates                   []candidateView
	// Unknown is the unknown-final list shown (queues.Unknown, up to 20 of
	// UnknownTotal): 반말 replies whose last 어절 ends in no known ending.
	Unknown                        []unknownReply
	UnknownTotal                   int
	AddValue, SkipValue, SeenValue string
}

// unknownReply is one reply of the unknown-final list: its sentences, the
// candidates derived from its last 어절 (each with the candidate's decision)
// and its own "seen" decision.
type unknownReply struct {
	mixedReply
	Word       string
	Candidates []candidateView
	Decision   *decisionView
}

type reviewedEnding struct {
	Ending   string
	Decision *decisionView
}

type candidateView struct {
	Ending, Words            string
	Sentences, Finals, Flips int
	Decision                 *decisionView
}

type mixedReply struct {
	TurnID, Anchor, Link            string
	Verdict, Class                  string
	Character, CharacterID, ModelID string
	Expected                        string
	Polite, Sentences               int
	Rows                            []sentenceRow
}

type sentenceRow struct {
	Before, Word, After string
	Polite              bool
	Ending              string
}

// ---- pages -------------------------------------------------------------------

func (s *Server) reviewIndex(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/forbidden", id), http.StatusSeeOther)
}

func (s *Server) reviewPage(slug string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := runID(r)
		if !ok {
			s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
			return
		}
		ctx := r.Context()
		d, err := s.run(ctx, id)
		if err != nil {
			s.storeFail(w, r, err)
			return
		}
		p, err := s.buildReview(ctx, d, slug, r)
		if err != nil {
			s.storeFail(w, r, err)
			return
		}
		s.render(w, r, http.StatusOK, "review", p)
	}
}

// review is what one run's three queues hold; computed on demand (the
// endings queue reads every reply) and cached with the run.
type review struct {
	forbidden []int
	names     []queues.NameGroup
	endings   queues.EndingReview
	err       error // the run's profile could not be rebuilt
}

func (s *Server) reviewOf(d *runData) *review {
	d.reviewOnce.Do(func() {
		rv := &review{forbidden: queues.ForbiddenSample(d.info.ID, d.recs), names: queues.OffCanonNames(d.recs)}
		if d.dataset != nil {
			p, err := runstore.ProfileOf(d.info)
			if err != nil {
				rv.err = err
			} else {
				rv.endings = queues.ReviewEndings(d.info.ID, p, d.recs, func(turnID string) (string, bool) {
					t := d.turns[turnID]
					if t == nil || t.ReplyText == nil {
						return "", false
					}
					return *t.ReplyText, true
				})
			}
		}
		d.review = rv
	})
	return d.review
}

func (s *Server) buildReview(ctx context.Context, d *runData, slug string, r *http.Request) (*reviewPage, error) {
	id := d.info.ID
	base := fmt.Sprintf("/runs/%d/review/", id)
	rv := s.reviewOf(d)
	p := &reviewPage{Run: head(d), Slug: slug, Who: whoOf(r, ""), Back: base + slug, Action: base + slug,
		UndoURL: base + "undo", ExportURL: "/review/decisions.jsonl"}
	counts := map[string]int{"forbidden": len(rv.forbidden), "offcanon": len(rv.names),
		"endings": len(rv.endings.Sample) + len(rv.endings.UnknownSample)}
	for _, q := range queuePages {
		p.Tabs = append(p.Tabs, reviewTab{Label: q.Label, URL: base + q.Slug, Count: counts[q.Slug], Current: q.Slug == slug})
	}
	if from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64); err == nil && from > 0 && from != id {
		if fd, err := s.run(ctx, from); err == nil {
			p.Changes = compareRuns(fd, d)
		}
	}
	var queue store.Queue
	for _, q := range queuePages {
		if q.Slug == slug {
			queue = q.Queue
		}
	}
	active, err := s.db.Decisions(ctx, queue)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*decisionView{}
	for _, dec := range active {
		v := labelled(dec)
		byKey[dec.Key] = &v
	}
	log, err := s.db.DecisionLog(ctx, queue)
	if err != nil {
		return nil, err
	}
	relevant := func(store.Decision) bool { return true }
	switch slug {
	case "forbidden":
		p.Forbidden = s.forbiddenQueue(d, rv, byKey)
		relevant = func(dec store.Decision) bool { _, ok := d.index[dec.Key]; return ok }
	case "offcanon":
		if d.dataset == nil {
			p.Why = "이 실행은 저장된 데이터셋 없이 판정되어 카드를 고치거나 다시 판정할 수 없습니다."
		}
		p.OffCanon = s.offCanonQueue(d, rv, byKey, active)
		relevant = func(dec store.Decision) bool { _, _, ok := splitNameKey(d, dec.Key); return ok }
	case "endings":
		switch {
		case d.dataset == nil:
			p.Why = "이 실행은 저장된 데이터셋 없이 판정되어 답장을 다시 읽거나 다시 판정할 수 없습니다."
		case rv.err != nil:
			p.Why = "이 실행의 말투 프로필을 되살리지 못했습니다: " + rv.err.Error()
		}
		p.Endings = s.endingsQueue(d, rv, byKey, active)
	}
	for i := len(log) - 1; i >= 0; i-- { // newest first
		if !relevant(log[i]) {
			continue
		}
		v := labelled(log[i])
		v.KeyLabel, v.KeyLink = keyLabel(d, log[i]), keyLink(d, log[i])
		p.LogEntries++
		if len(p.Log) < 100 {
			p.Log = append(p.Log, v)
		}
	}
	return p, nil
}

func keyLabel(d *runData, dec store.Decision) string {
	if dec.Queue == store.QueueOffCanon {
		if c, name, ok := splitNameKey(d, dec.Key); ok {
			if card, ok := d.cards[c]; ok && card.Name != "" {
				return name + " · " + card.Name
			}
			return name + " · " + c
		}
	}
	if turnID, ok := queues.SeenTurn(dec.Key); ok && dec.Queue == store.QueueEnding {
		return turnID + " 끝말"
	}
	return dec.Key
}

func keyLink(d *runData, dec store.Decision) string {
	key := dec.Key
	if dec.Queue == store.QueueEnding {
		key, _ = queues.SeenTurn(dec.Key)
	}
	if dec.Queue == store.QueueForbidden || dec.Queue == store.QueueEnding {
		if _, ok := d.index[key]; ok {
			return fmt.Sprintf("/runs/%d?turn=%s", d.info.ID, queryEscape(key))
		}
	}
	return ""
}

// splitNameKey splits an off-canon key (queues.OffCanonKey) by the
// longest character_id of the run's cards it starts with.
func splitNameKey(d *runData, key string) (character, name string, ok bool) {
	for c := range d.cards {
		if rest, found := strings.CutPrefix(key, c+"/"); found && rest != "" && len(c) > len(character) {
			character, name, ok = c, rest, true
		}
	}
	return character, name, ok
}

func (s *Server) turnLink(d *runData, turnID string) string {
	return fmt.Sprintf("/runs/%d?turn=%s", d.info.ID, queryEscape(turnID))
}

func (s *Server) forbiddenQueue(d *runData, rv *review, byKey map[string]*decisionView) *forbiddenView {
	v := &forbiddenView{Total: d.info.Tally.ByVerdict[persona.ForbiddenTopic]}
	for _, i := range rv.forbidden {
		rec := &d.recs[i]
		it := forbiddenItem{TurnID: rec.TurnID, Anchor: "q-" + rec.TurnID, Link: s.turnLink(d, rec.TurnID),
			CharacterID: rec.CharacterID, ModelID: rec.ModelID, Summary: rec.Summary,
			ConfirmValue: queues.ForbiddenConfirm, RejectValue: queues.ForbiddenReject}
		if c, ok := d.cards[rec.CharacterID]; ok {
			it.Character, it.CardForbids = c.Name, strings.Join(c.ForbiddenTopics, " · ")
		}
		if rec.TouchedTerm != nil {
			it.Term = *rec.TouchedTerm
		}
		if rec.TouchedTopic != nil {
			it.Topic = *rec.TouchedTopic
		}
		if reply, ok := replyOf(d, rec); ok {
			it.Reply = segments(reply, replySpans(rec, reply))
		} else {
			it.ReplyNull = true
		}
		if dec := byKey[rec.TurnID]; dec != nil {
			it.Decision, it.Current = dec, dec.Value
			v.Decided++
		}
		v.Items = append(v.Items, it)
	}
	return v
}

func (s *Server) offCanonQueue(d *runData, rv *review, byKey map[string]*decisionView, active []store.Decision) *offCanonView {
	v := &offCanonView{Names: len(rv.names), AddValue: queues.CanonAdd, BlockValue: queues.CanonBlock}
	shown := map[string]bool{}
	turns := map[int]bool{}
	for _, g := range rv.names {
		key := queues.OffCanonKey(g.CharacterID, g.Name)
		shown[key] = true
		ng := nameGroup{Name: g.Name, CharacterID: g.CharacterID, Count: len(g.Turns), Anchor: "n-" + strconv.Itoa(len(v.Groups)),
			Decision: byKey[key]}
		if c, ok := d.cards[g.CharacterID]; ok {
			ng.Character = c.Name
		}
		perVerdict := map[persona.Verdict]int{}
		for k, i := range g.Turns {
			turns[i] = true
			rec := &d.recs[i]
			perVerdict[rec.Verdict]++
			if k >= 3 {
				continue
			}
			ex := exampleTurn{TurnID: rec.TurnID, Link: s.turnLink(d, rec.TurnID), Verdict: string(rec.Verdict), Class: verdictClass[rec.Verdict]}
			if reply, ok := replyOf(d, rec); ok {
				ex.Reply = segments(reply, occurrences(reply, g.Name, markOffCanon, "세계관 밖 고유명사"))
			}
			ng.Examples = append(ng.Examples, ex)
		}
		ng.More = len(g.Turns) - len(ng.Examples)
		for _, vd := range persona.Verdicts {
			if n := perVerdict[vd]; n > 0 {
				ng.ByVerdict = append(ng.ByVerdict, verdictCount{string(vd), verdictClass[vd], n})
			}
		}
		v.Groups = append(v.Groups, ng)
	}
	v.Turns = len(turns)
	for _, dec := range active {
		c, name, ok := splitNameKey(d, dec.Key)
		if !ok || shown[dec.Key] {
			continue
		}
		nd := nameDecided{Name: name, CharacterID: c, Decision: labelled(dec)}
		if card, ok := d.cards[c]; ok {
			nd.Character = card.Name
			nd.InCanon = slices.Contains(card.CanonEntities, name)
		}
		v.Decided = append(v.Decided, nd)
	}
	return v
}

func (s *Server) endingsQueue(d *runData, rv *review, byKey map[string]*decisionView, active []store.Decision) *endingsView {
	h := head(d)
	v := &endingsView{Profile: h.Profile, Endings: h.Endings, Exceptions: h.Exceptions, Mixed: len(rv.endings.Mixed),
		UnknownTotal: len(rv.endings.Unknown), AddValue: queues.EndingAdd, SkipValue: queues.EndingSkip, SeenValue: queues.EndingSeen}
	own := map[string]bool{}
	for _, e := range d.info.Endings {
		own[e] = true
	}
	for _, dec := range active { // endings a review added, as this run has them
		if own[dec.Key] {
			v.Reviewed = append(v.Reviewed, reviewedEnding{Ending: dec.Key, Decision: byKey[dec.Key]})
		}
	}
	cands := map[string]candidateView{}
	for _, c := range rv.endings.Candidates {
		cv := candidateView{Ending: c.Ending, Words: strings.Join(c.Words, " · "),
			Sentences: c.Sentences, Finals: c.Finals, Flips: c.Flips, Decision: byKey[c.Ending]}
		cands[c.Ending] = cv
		v.Candidates = append(v.Candidates, cv)
	}
	for _, k := range rv.endings.Sample {
		m := rv.endings.Mixed[k]
		v.Sample = append(v.Sample, s.replyView(d, m.Pos, "m-", m.Reading))
	}
	for _, k := range rv.endings.UnknownSample {
		u := rv.endings.Unknown[k]
		ur := unknownReply{mixedReply: s.replyView(d, u.Pos, "u-", u.Reading), Word: u.Word}
		ur.Decision = byKey[queues.SeenKey(ur.TurnID)]
		for _, e := range u.Candidates {
			ur.Candidates = append(ur.Candidates, cands[e])
		}
		v.Unknown = append(v.Unknown, ur)
	}
	return v
}

// replyView lays out the reply of d.recs[pos] sentence by sentence, each
// sentence's last 어절 marked, for the endings queue (anchor prefix "m-"
// for a mixed reply, "u-" for an unknown-final one).
func (s *Server) replyView(d *runData, pos int, anchor string, rd speech.Reading) mixedReply {
	rec := &d.recs[pos]
	mr := mixedReply{TurnID: rec.TurnID, Anchor: anchor + rec.TurnID, Link: s.turnLink(d, rec.TurnID),
		Verdict: string(rec.Verdict), Class: verdictClass[rec.Verdict], CharacterID: rec.CharacterID, ModelID: rec.ModelID,
		Polite: rd.Polite, Sentences: len(rd.Sentences)}
	if c, ok := d.cards[rec.CharacterID]; ok {
		mr.Character = c.Name
	}
	if rec.RuleExpected != nil {
		mr.Expected = *rec.RuleExpected
	}
	for _, sn := range rd.Sentences {
		row := sentenceRow{Before: sn.Text, Polite: sn.Polite(), Ending: sn.Ending}
		if i := strings.LastIndex(sn.Text, sn.LastWord); i >= 0 && sn.LastWord != "" {
			row.Before, row.Word, row.After = sn.Text[:i], sn.LastWord, sn.Text[i+len(sn.LastWord):]
		}
		mr.Rows = append(mr.Rows, row)
	}
	return mr
}

// compareRuns lays out how the verdicts of run b differ from run a, turn by
// turn (evalrun.CompareRuns), the first 100 turns listed.
func compareRuns(a, b *runData) *changeView {
	v := &changeView{From: a.info.ID, To: b.info.ID, FromURL: fmt.Sprintf("/runs/%d", a.info.ID)}
	for _, vd := range persona.Verdicts {
		x, y := a.info.Tally.ByVerdict[vd], b.info.Tally.ByVerdict[vd]
		v.Counts = append(v.Counts, countChange{Verdict: string(vd), Class: verdictClass[vd], Before: x, After: y, Changed: x != y})
	}
	changes := evalrun.CompareRuns(a.recs, b.recs)
	if len(changes) > 100 {
		v.More = len(changes) - 100
		changes = changes[:100]
	}
	for _, ch := range changes {
		nr := &b.recs[ch.To]
		tc := turnChange{TurnID: ch.TurnID, Link: fmt.Sprintf("/runs/%d?turn=%s", b.info.ID, queryEscape(ch.TurnID)),
			Before: string(ch.Before), After: string(ch.After), BeforeCls: verdictClass[ch.Before], AfterCls: verdictClass[ch.After],
			ModelID: nr.ModelID, Summary: nr.Summary}
		if c, ok := b.cards[nr.CharacterID]; ok {
			tc.Character = c.Name
		}
		v.Turns = append(v.Turns, tc)
	}
	v.NoneDiffer = len(v.Turns) == 0
	return v
}

// ---- actions -------------------------------------------------------------------

// reviewRun reads the run of a review POST, or answers the error.
func (s *Server) reviewRun(w http.ResponseWriter, r *http.Request) (*runData, bool) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return nil, false
	}
	d, err := s.run(r.Context(), id)
	if err != nil {
		s.storeFail(w, r, err)
		return nil, false
	}
	return d, true
}

func badDecision(s *Server, w http.ResponseWriter, r *http.Request, detail string) {
	s.fail(w, r, http.StatusUnprocessableEntity, "결정을 저장하지 않았습니다", detail)
}

// decide stores one decision by the form's reviewer and remembers the name.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, d store.Decision) bool {
	d.Who = whoOf(r, r.PostFormValue("who"))
	rememberWho(w, r, d.Who)
	if _, err := s.db.Decide(r.Context(), d); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "결정을 저장하지 못했습니다", err.Error())
		return false
	}
	return true
}

func (s *Server) decideForbidden(w http.ResponseWriter, r *http.Request) {
	d, ok := s.reviewRun(w, r)
	if !ok {
		return
	}
	turn, value := r.PostFormValue("turn"), r.PostFormValue("value")
	i, found := d.index[turn]
	switch {
	case value != queues.ForbiddenConfirm && value != queues.ForbiddenReject:
		badDecision(s, w, r, "금지 소재 표본의 결정은 confirm(실제 문제) 또는 reject(문제 아님)입니다.")
		return
	case !found || d.recs[i].Verdict != persona.ForbiddenTopic:
		badDecision(s, w, r, fmt.Sprintf("실행 #%d 에 금지 소재 접촉으로 판정된 회차 %q 가 없습니다.", d.info.ID, turn))
		return
	}
	rec := &d.recs[i]
	note := fmt.Sprintf("실행 #%d · %s", d.info.ID, rec.CharacterID)
	if rec.TouchedTerm != nil && rec.TouchedTopic != nil {
		note += fmt.Sprintf(" · %s → %s", *rec.TouchedTerm, *rec.TouchedTopic)
	}
	if !s.decide(w, r, store.Decision{Queue: store.QueueForbidden, Key: turn, Value: value, Note: note}) {
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/forbidden#q-%s", d.info.ID, url.PathEscape(turn)), http.StatusSeeOther)
}

func (s *Server) decideOffCanon(w http.ResponseWriter, r *http.Request) {
	d, ok := s.reviewRun(w, r)
	if !ok {
		return
	}
	character, name, value := r.PostFormValue("character"), r.PostFormValue("name"), r.PostFormValue("value")
	key := queues.OffCanonKey(character, name)
	if value != queues.CanonAdd && value != queues.CanonBlock {
		badDecision(s, w, r, "세계관 밖 이름의 결정은 add(카드 설정에 더하기) 또는 block(막기)입니다.")
		return
	}
	if d.dataset == nil {
		badDecision(s, w, r, "이 실행은 저장된 데이터셋 없이 판정되어 카드를 고칠 수 없습니다.")
		return
	}
	known := slices.ContainsFunc(s.reviewOf(d).names, func(g queues.NameGroup) bool { return g.CharacterID == character && g.Name == name })
	if !known {
		if _, err := s.lastDecision(r.Context(), store.QueueOffCanon, key); err != nil {
			badDecision(s, w, r, fmt.Sprintf("실행 #%d 의 세계관 밖 이름에 %q(%s)가 없고 전에 내린 결정도 없습니다.", d.info.ID, name, character))
			return
		}
	}
	note := fmt.Sprintf("실행 #%d · 데이터셋 #%d", d.info.ID, d.info.DatasetID)
	if !s.decide(w, r, store.Decision{Queue: store.QueueOffCanon, Key: key, Value: value, Note: note}) {
		return
	}
	s.applyAndRedirect(w, r, d, "offcanon", func(ctx context.Context) (store.RunInfo, bool, error) {
		return runstore.ApplyCanon(ctx, s.db, d.info, character, name, runstore.Options{Workers: s.opt.Workers})
	}, "#n-decided")
}

func (s *Server) decideEnding(w http.ResponseWriter, r *http.Request) {
	d, ok := s.reviewRun(w, r)
	if !ok {
		return
	}
	ending, value := r.PostFormValue("ending"), r.PostFormValue("value")
	if value == queues.EndingSeen {
		s.decideSeen(w, r, d, r.PostFormValue("turn"))
		return
	}
	if value != queues.EndingAdd && value != queues.EndingSkip {
		badDecision(s, w, r, "어미 후보의 결정은 add(어미 목록에 더하기), skip(넣지 않기) 또는 seen(끝말 모름 답장을 읽어 봄)입니다.")
		return
	}
	if d.dataset == nil {
		badDecision(s, w, r, "이 실행은 저장된 데이터셋 없이 판정되어 다시 판정할 수 없습니다.")
		return
	}
	if _, ok := queues.SeenTurn(ending); ok {
		badDecision(s, w, r, fmt.Sprintf("%q 는 어미가 아닙니다.", ending))
		return
	}
	known := slices.ContainsFunc(s.reviewOf(d).endings.Candidates, func(c queues.Candidate) bool { return c.Ending == ending })
	if !known {
		if _, err := s.lastDecision(r.Context(), store.QueueEnding, ending); err != nil {
			badDecision(s, w, r, fmt.Sprintf("실행 #%d 의 어미 후보에 %q 가 없고 전에 내린 결정도 없습니다.", d.info.ID, ending))
			return
		}
	}
	note := fmt.Sprintf("실행 #%d · 프로필 %s", d.info.ID, d.info.Profile)
	if !s.decide(w, r, store.Decision{Queue: store.QueueEnding, Key: ending, Value: value, Note: note}) {
		return
	}
	s.applyAndRedirect(w, r, d, "endings", func(ctx context.Context) (store.RunInfo, bool, error) {
		return runstore.ApplyEnding(ctx, s.db, d.info, ending, runstore.Options{Workers: s.opt.Workers})
	}, "#candidates")
}

// decideSeen marks an unknown-final reply of the run read (key
// queues.SeenKey, value seen): it changes no profile, so nothing is judged
// again. The turn must be in the run's unknown-final list.
func (s *Server) decideSeen(w http.ResponseWriter, r *http.Request, d *runData, turnID string) {
	if !slices.ContainsFunc(s.reviewOf(d).endings.Unknown, func(u queues.Unknown) bool { return d.recs[u.Pos].TurnID == turnID }) {
		badDecision(s, w, r, fmt.Sprintf("실행 #%d 의 끝말 모름 답장에 %q 가 없습니다.", d.info.ID, turnID))
		return
	}
	note := fmt.Sprintf("실행 #%d · 프로필 %s", d.info.ID, d.info.Profile)
	if !s.decide(w, r, store.Decision{Queue: store.QueueEnding, Key: queues.SeenKey(turnID), Value: queues.EndingSeen, Note: note}) {
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/endings#u-%s", d.info.ID, url.PathEscape(turnID)), http.StatusSeeOther)
}

// errNoDecision: no decision, active or not, for a key.
var errNoDecision = errors.New("no decision for this key")

// lastDecision is the value of the latest decision ever made for (queue,
// key), undone or not; errNoDecision when there is none.
func (s *Server) lastDecision(ctx context.Context, q store.Queue, key string) (string, error) {
	log, err := s.db.DecisionLog(ctx, q)
	if err != nil {
		return "", err
	}
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Key == key {
			return log[i].Value, nil
		}
	}
	return "", errNoDecision
}

// applyAndRedirect runs a decision's consequence (one job at a time) and
// goes to the new run's queue when it judged again, else back.
func (s *Server) applyAndRedirect(w http.ResponseWriter, r *http.Request, d *runData, slug string,
	apply func(context.Context) (store.RunInfo, bool, error), anchor string) {
	s.jobs.Lock()
	next, judged, err := apply(r.Context())
	s.jobs.Unlock()
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "결정은 저장했지만 다시 판정하지 못했습니다", err.Error())
		return
	}
	if judged {
		http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/%s?from=%d", next.ID, slug, d.info.ID), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/%s%s", d.info.ID, slug, anchor), http.StatusSeeOther)
}

func (s *Server) undoDecision(w http.ResponseWriter, r *http.Request) {
	d, ok := s.reviewRun(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PostFormValue("decision"), 10, 64)
	if err != nil || id <= 0 {
		badDecision(s, w, r, "되돌릴 결정 번호가 없습니다.")
		return
	}
	dec, err := s.db.Decision(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, "그런 결정이 없습니다", err.Error())
		return
	}
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	who := whoOf(r, r.PostFormValue("who"))
	rememberWho(w, r, who)
	if err := s.db.Undo(ctx, id, who); errors.Is(err, store.ErrAlreadyUndone) {
		s.fail(w, r, http.StatusConflict, "이미 되돌린 결정입니다", err.Error())
		return
	} else if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "결정을 되돌리지 못했습니다", err.Error())
		return
	}
	slug := slugOf(dec.Queue)
	switch dec.Queue {
	case store.QueueOffCanon:
		if c, name, ok := splitNameKey(d, dec.Key); ok && d.dataset != nil {
			s.applyAndRedirect(w, r, d, slug, func(ctx context.Context) (store.RunInfo, bool, error) {
				return runstore.ApplyCanon(ctx, s.db, d.info, c, name, runstore.Options{Workers: s.opt.Workers})
			}, "")
			return
		}
	case store.QueueEnding:
		if turnID, seen := queues.SeenTurn(dec.Key); seen { // a seen mark changes no profile
			http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/%s#u-%s", d.info.ID, slug, url.PathEscape(turnID)), http.StatusSeeOther)
			return
		}
		if d.dataset != nil {
			s.applyAndRedirect(w, r, d, slug, func(ctx context.Context) (store.RunInfo, bool, error) {
				return runstore.ApplyEnding(ctx, s.db, d.info, dec.Key, runstore.Options{Workers: s.opt.Workers})
			}, "")
			return
		}
	}
	anchor := ""
	if dec.Queue == store.QueueForbidden {
		anchor = "#q-" + url.PathEscape(dec.Key)
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/%s%s", d.info.ID, slug, anchor), http.StatusSeeOther)
}

// setWho remembers the reviewer's name and goes back.
func (s *Server) setWho(w http.ResponseWriter, r *http.Request) {
	rememberWho(w, r, whoOf(r, r.PostFormValue("who")))
	http.Redirect(w, r, safeNext(r.PostFormValue("back")), http.StatusSeeOther)
}

// decisionsExport writes every decision, undone ones included, as JSON Lines.
func (s *Server) decisionsExport(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="evident-decisions.jsonl"`)
	bw := bufio.NewWriter(w)
	if err := s.db.ExportDecisions(r.Context(), bw); err != nil {
		s.opt.Log.Printf("web: export decisions: %v", err)
		return
	}
	bw.Flush()
}

func tabLabel(slug string) string {
	for _, q := range queuePages {
		if q.Slug == slug {
			return q.Label
		}
	}
	return slug
}
