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
	"sync"
	"unicode"
	"unicode/utf8"

	queues "evident/persona/review"

	"evident/internal/clip"
	"evident/persona"
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
	if c := clip.Runes(who, maxWho); c < len(who) {
		who = strings.TrimSpace(who[:c]) // at most maxWho runes, whole grapheme clusters
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
	// Jobs are this run's re-judges kept in memory (jobs.go), newest
	// first: queued and running ones with their progress, finished ones
	// with their result.
	Jobs []jobView
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
	More       int // on the first page: the changed turns not listed
	NoneDiffer bool
	// Total is how many turns changed, counted up to changesCap (Capped:
	// at least that many); NextURL and FirstURL page through them.
	Total             int
	Capped            bool
	NextURL, FirstURL string
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
	Groups       []nameGroup // this page's (namesPage a page)
	// Page and Pages number the pages of groups when there is more than
	// one (0 otherwise); PrevURL and NextURL go between them.
	Page, Pages      int
	PrevURL, NextURL string
	Decided          []nameDecided
	AddValue         string
	BlockValue       string
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
		d, err := s.head(ctx, id)
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

// review is what one run's three queues hold (runstore.Queues: read from
// the store, else computed in one pass over the run and kept there),
// cached with the run's head; bounded by what the queues show.
type review struct {
	q       queues.Queues
	profile *speech.Profile // the run's (nil without a dataset, or when err is set)
	err     error           // the run's profile could not be rebuilt
}

// reviewFlight makes concurrent first views of one run's queues do one
// pass: the first caller computes, the others wait for its result.
var reviewFlight = flight[*review]{calls: map[string]*flightCall[*review]{}}

// reviewOf returns the run's queues, read or computed once (reviewFlight)
// and then kept with the run's head. The pass runs without the request's
// cancellation, so a reader who leaves does not waste it for the next.
func (s *Server) reviewOf(ctx context.Context, d *runData) (*review, error) {
	d.reviewMu.Lock()
	rv := d.review
	d.reviewMu.Unlock()
	if rv != nil {
		return rv, nil
	}
	rv, err := reviewFlight.do(fmt.Sprintf("%p/%d", s.db, d.info.ID), func() (*review, error) {
		rv := &review{}
		if d.dataset != nil {
			rv.profile, rv.err = runstore.ProfileOf(d.info)
		}
		q, keepErr, err := runstore.Queues(context.WithoutCancel(ctx), s.db, d.info)
		if err != nil {
			return nil, err
		}
		if keepErr != nil {
			s.opt.Log.Printf("web: review queues of run %d not kept in the store: %v", d.info.ID, keepErr)
		}
		rv.q = q
		return rv, nil
	})
	if err != nil {
		return nil, err
	}
	d.reviewMu.Lock()
	d.review = rv
	d.reviewMu.Unlock()
	return rv, nil
}

// flight runs one call per key at a time and gives its result to every
// caller that asked meanwhile (golang.org/x/sync/singleflight's rule).
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	done   chan struct{}
	v      T
	err    error
	joined int // callers waiting on this call (tests)
}

func (f *flight[T]) do(key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		c.joined++
		f.mu.Unlock()
		<-c.done
		return c.v, c.err
	}
	c := &flightCall[T]{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.v, c.err = fn()
	return c.v, c.err
}

// namesPage is how many off-canon name groups one page of that queue shows
// (?page=N, from 1).
const namesPage = 50

// changesPage is how many changed turns the changes panel lists per page
// (?after=SEQ continues), and changesCap where it stops counting them.
const (
	changesPage = 100
	changesCap  = 10_000
)

func (s *Server) buildReview(ctx context.Context, d *runData, slug string, r *http.Request) (*reviewPage, error) {
	id := d.info.ID
	base := fmt.Sprintf("/runs/%d/review/", id)
	rv, err := s.reviewOf(ctx, d)
	if err != nil {
		return nil, err
	}
	p := &reviewPage{Run: head(d), Slug: slug, Who: whoOf(r, ""), Back: base + slug, Action: base + slug,
		UndoURL: base + "undo", ExportURL: "/review/decisions.jsonl", Jobs: s.rejudges.forRun(id)}
	counts := map[string]int{"forbidden": len(rv.q.Forbidden.Sample), "offcanon": len(rv.q.Names.Groups)}
	if e := rv.q.Endings; e != nil {
		counts["endings"] = len(e.MixedSample) + len(e.UnknownSample)
	}
	for _, q := range queuePages {
		p.Tabs = append(p.Tabs, reviewTab{Label: q.Label, URL: base + q.Slug, Count: counts[q.Slug], Current: q.Slug == slug})
	}
	if from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64); err == nil && from > 0 && from != id {
		if fd, err := s.head(ctx, from); err == nil {
			after, err := strconv.Atoi(r.URL.Query().Get("after"))
			if err != nil || after < 0 {
				after = -1
			}
			if p.Changes, err = s.compareRuns(ctx, fd, d, slug, after); err != nil {
				return nil, err
			}
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
	// The turns the log's keys name that this run has (looked up by
	// turn_id, a thousand at a time): a forbidden or seen decision is
	// this run's when its turn is, and links to it.
	inRun := map[string]bool{}
	if queue == store.QueueForbidden || queue == store.QueueEnding {
		var ids []string
		for _, dec := range log {
			if key, ok := turnKey(dec); ok {
				ids = append(ids, key)
			}
		}
		slices.Sort(ids)
		for ids = slices.Compact(ids); len(ids) > 0; {
			n := min(len(ids), store.MaxLookup)
			es, err := s.db.EntriesByTurnID(ctx, id, ids[:n])
			if err != nil {
				return nil, err
			}
			for k := range es {
				inRun[k] = true
			}
			ids = ids[n:]
		}
	}
	relevant := func(store.Decision) bool { return true }
	switch slug {
	case "forbidden":
		if p.Forbidden, err = s.forbiddenQueue(ctx, d, rv, byKey); err != nil {
			return nil, err
		}
		relevant = func(dec store.Decision) bool { return inRun[dec.Key] }
	case "offcanon":
		if d.dataset == nil {
			p.Why = "이 실행은 저장된 데이터셋 없이 판정되어 카드를 고치거나 다시 판정할 수 없습니다."
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if p.OffCanon, err = s.offCanonQueue(ctx, d, rv, byKey, active, page); err != nil {
			return nil, err
		}
		relevant = func(dec store.Decision) bool { _, _, ok := splitNameKey(d, dec.Key); return ok }
	case "endings":
		switch {
		case d.dataset == nil:
			p.Why = "이 실행은 저장된 데이터셋 없이 판정되어 답장을 다시 읽거나 다시 판정할 수 없습니다."
		case rv.err != nil:
			p.Why = "이 실행의 말투 프로필을 되살리지 못했습니다: " + rv.err.Error()
		}
		if p.Endings, err = s.endingsQueue(ctx, d, rv, byKey, active); err != nil {
			return nil, err
		}
	}
	for i := len(log) - 1; i >= 0; i-- { // newest first
		if !relevant(log[i]) {
			continue
		}
		v := labelled(log[i])
		v.KeyLabel, v.KeyLink = keyLabel(d, log[i]), keyLink(d, log[i], inRun)
		p.LogEntries++
		if len(p.Log) < 100 {
			p.Log = append(p.Log, v)
		}
	}
	return p, nil
}

// turnKey is the turn_id a forbidden or seen decision is about.
func turnKey(dec store.Decision) (string, bool) {
	switch dec.Queue {
	case store.QueueForbidden:
		return dec.Key, dec.Key != ""
	case store.QueueEnding:
		return queues.SeenTurn(dec.Key)
	}
	return "", false
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

// keyLink links a forbidden or seen decision to its turn in this run, when
// the run has it (inRun).
func keyLink(d *runData, dec store.Decision, inRun map[string]bool) string {
	if key, ok := turnKey(dec); ok && inRun[key] {
		return fmt.Sprintf("/runs/%d?turn=%s", d.info.ID, queryEscape(key))
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

// queuePage is what one queue page shows of the run: its records and their
// turns, looked up by turn_id (store.EntriesByTurnID, pageTurns).
type queuePage struct {
	recs  map[string]*persona.Record
	turns map[string]persona.Turn // the page's turns, by turn_id
}

func (s *Server) lookupPage(ctx context.Context, d *runData, ids []string) (queuePage, error) {
	pg := queuePage{recs: map[string]*persona.Record{}}
	var list []*persona.Record
	for len(ids) > 0 {
		n := min(len(ids), store.MaxLookup)
		es, err := s.db.EntriesByTurnID(ctx, d.info.ID, ids[:n])
		if err != nil {
			return pg, err
		}
		for k, e := range es {
			pg.recs[k] = &e.Record
			list = append(list, &e.Record)
		}
		ids = ids[n:]
	}
	var err error
	pg.turns, err = s.pageTurns(ctx, d, list)
	return pg, err
}

// reply is the record's reply_text: from the stored dataset's turn, else
// the reply the record's evidence cites for its own turn
// (persona.Record.JudgedReply).
func (pg queuePage) reply(rec *persona.Record) (string, bool) {
	if t, ok := pg.turns[rec.TurnID]; ok {
		if t.ReplyText == nil {
			return "", false
		}
		return *t.ReplyText, true
	}
	return rec.JudgedReply()
}

func (s *Server) forbiddenQueue(ctx context.Context, d *runData, rv *review, byKey map[string]*decisionView) (*forbiddenView, error) {
	v := &forbiddenView{Total: rv.q.Forbidden.Total}
	var ids []string
	for _, it := range rv.q.Forbidden.Sample {
		ids = append(ids, it.TurnID)
	}
	pg, err := s.lookupPage(ctx, d, ids)
	if err != nil {
		return nil, err
	}
	for _, item := range rv.q.Forbidden.Sample {
		rec := pg.recs[item.TurnID]
		if rec == nil {
			continue // not in the run: the queue is newer than the page's read
		}
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
		if reply, ok := pg.reply(rec); ok {
			it.Reply = shownSegments(reply, replySpans(rec, reply))
		} else {
			it.ReplyNull = true
		}
		if dec := byKey[rec.TurnID]; dec != nil {
			it.Decision, it.Current = dec, dec.Value
			v.Decided++
		}
		v.Items = append(v.Items, it)
	}
	return v, nil
}

func (s *Server) offCanonQueue(ctx context.Context, d *runData, rv *review, byKey map[string]*decisionView, active []store.Decision, page int) (*offCanonView, error) {
	groups := rv.q.Names.Groups
	v := &offCanonView{Names: len(groups), Turns: rv.q.Names.Turns, AddValue: queues.CanonAdd, BlockValue: queues.CanonBlock}
	shown := map[string]bool{}
	for _, g := range groups {
		shown[queues.OffCanonKey(g.CharacterID, g.Name)] = true
	}
	pages := max(1, (len(groups)+namesPage-1)/namesPage)
	page = min(max(page, 1), pages)
	first := (page - 1) * namesPage
	groups = groups[first:min(len(groups), first+namesPage)]
	if pages > 1 {
		v.Page, v.Pages = page, pages
		base := fmt.Sprintf("/runs/%d/review/offcanon?page=", d.info.ID)
		if page > 1 {
			v.PrevURL = base + strconv.Itoa(page-1)
		}
		if page < pages {
			v.NextURL = base + strconv.Itoa(page+1)
		}
	}
	var ids []string
	for _, g := range groups {
		for _, ex := range g.Examples {
			ids = append(ids, ex.TurnID)
		}
	}
	pg, err := s.lookupPage(ctx, d, ids)
	if err != nil {
		return nil, err
	}
	for k, g := range groups {
		key := queues.OffCanonKey(g.CharacterID, g.Name)
		ng := nameGroup{Name: g.Name, CharacterID: g.CharacterID, Count: g.Count, Anchor: "n-" + strconv.Itoa(first+k),
			Decision: byKey[key]}
		if c, ok := d.cards[g.CharacterID]; ok {
			ng.Character = c.Name
		}
		for _, ex := range g.Examples {
			rec := pg.recs[ex.TurnID]
			if rec == nil {
				continue
			}
			et := exampleTurn{TurnID: rec.TurnID, Link: s.turnLink(d, rec.TurnID), Verdict: string(rec.Verdict), Class: verdictClass[rec.Verdict]}
			if reply, ok := pg.reply(rec); ok {
				et.Reply = shownSegments(reply, occurrences(reply, g.Name, markOffCanon, "세계관 밖 고유명사"))
			}
			ng.Examples = append(ng.Examples, et)
		}
		ng.More = g.Count - len(ng.Examples)
		for _, vd := range persona.Verdicts {
			if n := g.ByVerdict[vd]; n > 0 {
				ng.ByVerdict = append(ng.ByVerdict, verdictCount{string(vd), verdictClass[vd], n})
			}
		}
		v.Groups = append(v.Groups, ng)
	}
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
	return v, nil
}

func (s *Server) endingsQueue(ctx context.Context, d *runData, rv *review, byKey map[string]*decisionView, active []store.Decision) (*endingsView, error) {
	h := head(d)
	v := &endingsView{Profile: h.Profile, Endings: h.Endings, Exceptions: h.Exceptions,
		AddValue: queues.EndingAdd, SkipValue: queues.EndingSkip, SeenValue: queues.EndingSeen}
	own := map[string]bool{}
	for _, e := range d.info.Endings {
		own[e] = true
	}
	for _, dec := range active { // endings a review added, as this run has them
		if own[dec.Key] {
			v.Reviewed = append(v.Reviewed, reviewedEnding{Ending: dec.Key, Decision: byKey[dec.Key]})
		}
	}
	e := rv.q.Endings
	if e == nil || rv.profile == nil {
		return v, nil
	}
	v.Mixed, v.UnknownTotal = e.Mixed, e.Unknown
	cands := map[string]candidateView{}
	for _, c := range e.Candidates {
		cv := candidateView{Ending: c.Ending, Words: strings.Join(c.Words, " · "),
			Sentences: c.Sentences, Finals: c.Finals, Flips: c.Flips, Decision: byKey[c.Ending]}
		cands[c.Ending] = cv
		v.Candidates = append(v.Candidates, cv)
	}
	var ids []string
	for _, m := range e.MixedSample {
		ids = append(ids, m.TurnID)
	}
	for _, u := range e.UnknownSample {
		ids = append(ids, u.TurnID)
	}
	pg, err := s.lookupPage(ctx, d, ids)
	if err != nil {
		return nil, err
	}
	// The sampled replies are read again with the run's profile (the
	// stored queue keeps no readings; the reading is the one the queue
	// was built from, the profile and reply being the same).
	for _, m := range e.MixedSample {
		if rec := pg.recs[m.TurnID]; rec != nil {
			if reply, ok := pg.reply(rec); ok {
				v.Sample = append(v.Sample, s.replyView(d, rec, "m-", rv.profile.Read(reply)))
			}
		}
	}
	for _, u := range e.UnknownSample {
		rec := pg.recs[u.TurnID]
		if rec == nil {
			continue
		}
		reply, ok := pg.reply(rec)
		if !ok {
			continue
		}
		ur := unknownReply{mixedReply: s.replyView(d, rec, "u-", rv.profile.Read(reply)), Word: u.Word}
		ur.Decision = byKey[queues.SeenKey(ur.TurnID)]
		for _, e := range u.Candidates {
			ur.Candidates = append(ur.Candidates, cands[e])
		}
		v.Unknown = append(v.Unknown, ur)
	}
	return v, nil
}

// replyView lays out the reply of rec sentence by sentence, each
// sentence's last 어절 marked, for the endings queue (anchor prefix "m-"
// for a mixed reply, "u-" for an unknown-final one).
func (s *Server) replyView(d *runData, rec *persona.Record, anchor string, rd speech.Reading) mixedReply {
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
// turn (evalrun.CompareRuns' rule, read from the store a page at a time:
// store.VerdictChanges), changesPage turns from b's seq > after on, the
// total counted up to changesCap.
func (s *Server) compareRuns(ctx context.Context, a, b *runData, slug string, after int) (*changeView, error) {
	v := &changeView{From: a.info.ID, To: b.info.ID, FromURL: fmt.Sprintf("/runs/%d", a.info.ID)}
	for _, vd := range persona.Verdicts {
		x, y := a.info.Tally.ByVerdict[vd], b.info.Tally.ByVerdict[vd]
		v.Counts = append(v.Counts, countChange{Verdict: string(vd), Class: verdictClass[vd], Before: x, After: y, Changed: x != y})
	}
	changes, err := s.db.VerdictChanges(ctx, a.info.ID, b.info.ID, after, changesPage+1)
	if err != nil {
		return nil, err
	}
	// A first page that is not full is every change: no count needed (a
	// run with few changes costs one pass, not two).
	total := len(changes)
	if after >= 0 || len(changes) > changesPage {
		if total, err = s.db.CountVerdictChanges(ctx, a.info.ID, b.info.ID, changesCap); err != nil {
			return nil, err
		}
	}
	if len(changes) > changesPage {
		changes = changes[:changesPage]
		v.NextURL = fmt.Sprintf("/runs/%d/review/%s?from=%d&after=%d#changes", b.info.ID, slug, a.info.ID, changes[len(changes)-1].Seq)
	}
	if after >= 0 {
		v.FirstURL = fmt.Sprintf("/runs/%d/review/%s?from=%d#changes", b.info.ID, slug, a.info.ID)
	}
	v.Total, v.Capped = total, total >= changesCap
	if after < 0 {
		v.More = max(total-len(changes), 0)
	}
	for _, ch := range changes {
		tc := turnChange{TurnID: ch.TurnID, Link: fmt.Sprintf("/runs/%d?turn=%s", b.info.ID, queryEscape(ch.TurnID)),
			Before: string(ch.Before), After: string(ch.After), BeforeCls: verdictClass[ch.Before], AfterCls: verdictClass[ch.After],
			ModelID: ch.ModelID, Summary: ch.Summary}
		if c, ok := b.cards[ch.CharacterID]; ok {
			tc.Character = c.Name
		}
		v.Turns = append(v.Turns, tc)
	}
	v.NoneDiffer = total == 0
	return v, nil
}

// ---- actions -------------------------------------------------------------------

// reviewRun reads the run of a review POST, or answers the error.
func (s *Server) reviewRun(w http.ResponseWriter, r *http.Request) (*runData, bool) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return nil, false
	}
	d, err := s.head(r.Context(), id)
	if err != nil {
		s.storeFail(w, r, err)
		return nil, false
	}
	return d, true
}

// recordOf is the run's record of turnID (store.EntriesByTurnID), nil when
// the run has none.
func (s *Server) recordOf(ctx context.Context, d *runData, turnID string) (*persona.Record, error) {
	if turnID == "" {
		return nil, nil
	}
	es, err := s.db.EntriesByTurnID(ctx, d.info.ID, []string{turnID})
	if err != nil {
		return nil, err
	}
	if e, ok := es[turnID]; ok {
		return &e.Record, nil
	}
	return nil, nil
}

func badDecision(s *Server, w http.ResponseWriter, r *http.Request, detail string) {
	s.fail(w, r, http.StatusUnprocessableEntity, "결정을 저장하지 않았습니다", detail)
}

// decide stores one decision by the form's reviewer and remembers the name.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, d store.Decision) bool {
	d.Who = whoOf(r, r.PostFormValue("who"))
	rememberWho(w, r, d.Who)
	// The key's active decision again (a second click, or accepting once
	// more after a re-judge that a server stop interrupted) is not stored
	// twice; what it needs (a re-judge) still follows.
	active, err := s.db.Decisions(r.Context(), d.Queue)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, "결정을 저장하지 못했습니다", err.Error())
		return false
	}
	if i := slices.IndexFunc(active, func(x store.Decision) bool { return x.Key == d.Key }); i >= 0 && active[i].Value == d.Value {
		return true
	}
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
	if value != queues.ForbiddenConfirm && value != queues.ForbiddenReject {
		badDecision(s, w, r, "금지 소재 표본의 결정은 confirm(실제 문제) 또는 reject(문제 아님)입니다.")
		return
	}
	rec, err := s.recordOf(r.Context(), d, turn)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	if rec == nil || rec.Verdict != persona.ForbiddenTopic {
		badDecision(s, w, r, fmt.Sprintf("실행 #%d 에 금지 소재 접촉으로 판정된 회차 %q 가 없습니다.", d.info.ID, turn))
		return
	}
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
	rv, err := s.reviewOf(r.Context(), d)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	known := slices.ContainsFunc(rv.q.Names.Groups, func(g queues.NameGroup) bool { return g.CharacterID == character && g.Name == name })
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
	dec := store.Decision{Queue: store.QueueOffCanon, Key: key, Value: value}
	s.rejudgeInBackground(w, r, d, "offcanon", runstore.Change{Queue: store.QueueOffCanon, CharacterID: character, Name: name},
		decisionLabel(d, dec), "#n-decided")
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
	rv, err := s.reviewOf(r.Context(), d)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	known := rv.q.Endings != nil && slices.ContainsFunc(rv.q.Endings.Candidates, func(c queues.Candidate) bool { return c.Ending == ending })
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
	dec := store.Decision{Queue: store.QueueEnding, Key: ending, Value: value}
	s.rejudgeInBackground(w, r, d, "endings", runstore.Change{Queue: store.QueueEnding, Ending: ending},
		"어미 "+decisionLabel(d, dec), "#candidates")
}

// decideSeen marks an unknown-final reply of the run read (key
// queues.SeenKey, value seen): it changes no profile, so nothing is judged
// again. The turn must be one of the run's unknown-final replies: its
// record is looked up by turn_id and its reply read with the run's profile
// (queues.EndingQueue's rule: 반말 in every sentence, the last 어절 no known
// final), so a reply outside the shown sample qualifies too, as before.
func (s *Server) decideSeen(w http.ResponseWriter, r *http.Request, d *runData, turnID string) {
	rv, err := s.reviewOf(r.Context(), d)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	unknown := false
	if rv.profile != nil {
		pg, err := s.lookupPage(r.Context(), d, []string{turnID})
		if err != nil {
			s.storeFail(w, r, err)
			return
		}
		if rec := pg.recs[turnID]; rec != nil {
			if reply, ok := pg.reply(rec); ok {
				rd := rv.profile.Read(reply)
				unknown = rd.Style() == speech.Banmal && !queues.PlainFinal(rd.Sentences[len(rd.Sentences)-1].LastWord)
			}
		}
	}
	if !unknown {
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

// rejudgeInBackground carries out a stored decision's consequence: when
// it changes the card or the profile (runstore.Pending), or a re-judge of
// the run is queued or running already, a background job judges the
// dataset again (jobs.go; joined into the run's queued job when there is
// one) and the browser goes to the job's page (a script gets 202 and the
// job's JSON); otherwise back to the queue at anchor (a script gets 200 and
// {"judged_again": false, "next": URL}).
func (s *Server) rejudgeInBackground(w http.ResponseWriter, r *http.Request, d *runData, slug string,
	change runstore.Change, label, anchor string) {
	plan := runstore.Plan{Changes: []runstore.Change{change}}
	if !s.rejudges.busy(d.info.ID) {
		pending, err := runstore.Pending(r.Context(), s.db, d.info, plan)
		if err != nil {
			s.fail(w, r, http.StatusInternalServerError, "결정은 저장했지만 다시 판정하지 못했습니다", err.Error())
			return
		}
		if !pending {
			back := fmt.Sprintf("/runs/%d/review/%s%s", d.info.ID, slug, anchor)
			if wantsJSON(r) {
				writeJSON(w, http.StatusOK, map[string]any{"judged_again": false, "next": back})
				return
			}
			http.Redirect(w, r, back, http.StatusSeeOther)
			return
		}
	}
	j, err := s.rejudges.submit(d.info, slug, plan, label)
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, "결정은 저장했지만 다시 판정을 시작하지 못했습니다",
			err.Error()+" 서버를 다시 띄운 뒤 실행 목록에서 데이터셋을 다시 판정하세요.")
		return
	}
	s.answerJob(w, r, j)
}

// decisionLabel is how a job names the decision it applies: the key as the
// log shows it, then the value's label.
func decisionLabel(d *runData, dec store.Decision) string {
	return keyLabel(d, dec) + ": " + labelled(dec).Label
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
			s.rejudgeInBackground(w, r, d, slug, runstore.Change{Queue: store.QueueOffCanon, CharacterID: c, Name: name},
				"되돌림 · "+decisionLabel(d, dec), "")
			return
		}
	case store.QueueEnding:
		if turnID, seen := queues.SeenTurn(dec.Key); seen { // a seen mark changes no profile
			http.Redirect(w, r, fmt.Sprintf("/runs/%d/review/%s#u-%s", d.info.ID, slug, url.PathEscape(turnID)), http.StatusSeeOther)
			return
		}
		if d.dataset != nil {
			s.rejudgeInBackground(w, r, d, slug, runstore.Change{Queue: store.QueueEnding, Ending: dec.Key},
				"되돌림 · 어미 "+decisionLabel(d, dec), "")
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
