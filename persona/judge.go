package persona

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"evident/internal/multimatch"
	"evident/persona/speech"
)

// Judge applies the four rules of spec persona.md to turns. It holds the
// cards, the compiled lexicon and the speech profile; it is read-only after
// NewJudge and safe for concurrent use.
type Judge struct {
	profile *speech.Profile
	lexicon *Lexicon
	cards   map[string]*cardRules
	memo    *summaryMemo // check 10's recent answers (checks.go)
	lexCite *sync.Map    // check 9's lexicon cells, "term" and "topic" → *citeCell (checks.go)
}

// cardRules is a card plus what the rules precompute from it.
type cardRules struct {
	Card
	expected  string              // rule_expected
	canon     map[string]bool     // canon_entities
	forbidden map[string]bool     // forbidden_topics, as a set (not per lexicon row: cards × rows can be large)
	roles     *multimatch.Matcher // the entity_roles roles, in card order; nil for at most smallRoles roles
	cite      sync.Map            // check 9's large cells of the card, field → *citeCell (checks.go)
}

// smallRoles is the most entity_roles a card's recall rule reads with one
// strings.Contains per role (at most 8 passes over the message, linear in it)
// instead of building the card an automaton, which costs about 800 bytes for
// a card of five roles (50,000 such cards: 40 MB more for the judge).
const smallRoles = 8

// NewJudge prepares a judge. cards must have unique character_id (the
// reader's job; a repeat is an error naming it); profile nil means
// speech.Seed(). The lexicon's terms, and the entity_roles roles of each
// card of more than smallRoles, are compiled here, once, into automata
// (internal/multimatch) that rules 3 and 4 read a text with in one pass; an
// error names the table (and the card) whose strings hold more than 2 GiB in
// all.
func NewJudge(cards []Card, lexicon []LexiconRow, profile *speech.Profile) (*Judge, error) {
	if profile == nil {
		profile = speech.Seed()
	}
	lex, err := NewLexicon(lexicon)
	if err != nil {
		return nil, err
	}
	j := &Judge{profile: profile, lexicon: lex, cards: make(map[string]*cardRules, len(cards)),
		memo: &summaryMemo{seed: maphash.MakeSeed()}, lexCite: &sync.Map{}}
	for _, c := range cards {
		if _, dup := j.cards[c.CharacterID]; dup {
			return nil, fmt.Errorf("character_card: duplicate character_id %q", c.CharacterID)
		}
		cr := &cardRules{Card: c, expected: c.HonorificRule + " · " + c.FirstPerson, canon: map[string]bool{}}
		if len(c.EntityRoles) > smallRoles {
			if cr.roles, err = multimatch.New(len(c.EntityRoles), func(i int) string { return c.EntityRoles[i].Role }); err != nil {
				return nil, fmt.Errorf("character_card %q: entity_roles: %w", c.CharacterID, err)
			}
		}
		for _, e := range c.CanonEntities {
			cr.canon[e] = true
		}
		cr.forbidden = make(map[string]bool, len(c.ForbiddenTopics))
		for _, topic := range c.ForbiddenTopics {
			cr.forbidden[topic] = true
		}
		j.cards[c.CharacterID] = cr
	}
	return j, nil
}

// recallAsked returns the first entity_roles row of c (in card order) whose
// role occurs verbatim in t's user_message (spec persona.md rule 4); "" when
// none or the message is null. An empty role never occurs. It does not look
// at user_asked_recall. A card of more than smallRoles roles has the message
// read once by its roles automaton, built by NewJudge: O(len(user_message))
// whatever the number of roles; a smaller one makes at most smallRoles
// strings.Contains passes.
func (c *cardRules) recallAsked(t *Turn) (role, entity string) {
	if t.UserMessage == nil {
		return "", ""
	}
	if c.roles == nil {
		for _, er := range c.EntityRoles {
			if er.Role != "" && strings.Contains(*t.UserMessage, er.Role) {
				return er.Role, er.Entity
			}
		}
		return "", ""
	}
	if i, ok := c.roles.Earliest(*t.UserMessage); ok {
		er := c.EntityRoles[i]
		return er.Role, er.Entity
	}
	return "", ""
}

// RecallQuery returns the entity the recall rule will ask History.Earliest
// about for t (spec persona.md rule 4): the entity of the first entity_roles
// row of t's card whose role occurs in user_message, when user_asked_recall
// is true. ok is false when the rule asks nothing (not asked, no role in the
// message, null message, or no card for t's character_id). A judge's first
// pass uses it to index only the questions that will be asked.
func (j *Judge) RecallQuery(t *Turn) (entity string, ok bool) {
	c := j.cards[t.CharacterID]
	if c == nil || !t.UserAskedRecall {
		return "", false
	}
	role, entity := c.recallAsked(t)
	return entity, role != ""
}

// RecallEntities returns every entity named in some card's entity_roles: the
// only entities the recall rule can ask about (for NewSessionsFor).
func (j *Judge) RecallEntities() map[string]bool {
	m := map[string]bool{}
	for _, c := range j.cards {
		for _, er := range c.EntityRoles {
			m[er.Entity] = true
		}
	}
	return m
}

// Profile returns the speech profile the judge reads replies with.
func (j *Judge) Profile() *speech.Profile { return j.profile }

// Lexicon returns the compiled topic lexicon.
func (j *Judge) Lexicon() *Lexicon { return j.lexicon }

// Card returns the card for characterID.
func (j *Judge) Card(characterID string) (*Card, bool) {
	c, ok := j.cards[characterID]
	if !ok {
		return nil, false
	}
	return &c.Card, true
}

// Findings is everything the four rules compute for one turn, before it is
// written as a record. Evidence, summary and hedge are derived from it, and the
// automatic checks recompute it to compare with a record.
type Findings struct {
	// Speech (rule 1). Reading is empty and SpeechSkipped true when reply_text
	// is null or has no sentence with a Hangul syllable.
	Reading       speech.Reading
	Style         string // speech.Banmal, speech.Jondaemal or "" (skipped)
	SpeechSkipped bool
	StyleOff      bool // style differs from the card's honorific_rule
	FirstOff      bool // first_person non-null and differs from the card's
	RuleExpected  string
	RuleObserved  *string

	// Off-canon names (rule 2); nil when named_entities is null.
	OffCanon []string

	// Forbidden topic (rule 3): lexicon row indices, -1 when none.
	TermRow, ForbiddenRow int

	// Recall (rule 4).
	RecallAsked  bool   // user_asked_recall
	RecallRole   string // role found in user_message, "" when none
	RecallEntity string // its entity
	RecallSource *Mention
	RecallFired  bool // the entity was named earlier and is missing now

	Verdict Verdict
}

// Find applies the four rules to t (at accepted-input position pos) with card
// c and history h, and sets the verdict by priority. h may be nil (no earlier
// turns). It is the judge's core and does no I/O.
func (j *Judge) find(t *Turn, pos int, c *cardRules, h History) Findings {
	f := Findings{TermRow: -1, ForbiddenRow: -1, RuleExpected: c.expected}
	reply := ""
	if t.ReplyText != nil {
		reply = *t.ReplyText
	}

	// Rule 1: speech style and first person.
	f.Reading = j.profile.Read(reply)
	f.Style = f.Reading.Style()
	if f.Style == "" {
		f.SpeechSkipped = true
	} else {
		obs := f.Style
		if t.FirstPerson != nil {
			obs += " · " + *t.FirstPerson
			// seed: verbatim; extended: declined forms agree (제가 = 저, 내 = 나)
			f.FirstOff = !j.profile.SameFirstPerson(*t.FirstPerson, c.FirstPerson, c.FirstPersonForms...)
		}
		f.RuleObserved = &obs
		f.StyleOff = f.Style != c.HonorificRule
	}

	// Rule 2: off-canon names, in named_entities order, without repeats.
	if t.NamedEntities != nil {
		f.OffCanon = []string{}
		Distinct(t.NamedEntities, func(_ int, e string) bool {
			if !c.canon[e] {
				f.OffCanon = append(f.OffCanon, e)
			}
			return true
		})
	}

	// Rule 3: lexicon terms contained verbatim.
	rows := j.lexicon.Rows()
	f.TermRow, f.ForbiddenRow = j.lexicon.Touch(reply, func(row int) bool { return c.forbidden[rows[row].Topic] })

	// Rule 4: recall, only when the user asked.
	if t.UserAskedRecall {
		f.RecallAsked = true
		f.RecallRole, f.RecallEntity = c.recallAsked(t)
		if f.RecallRole != "" && h != nil {
			if m, ok := h.Earliest(t, pos, f.RecallEntity); ok {
				f.RecallSource = &m
				f.RecallFired = !strings.Contains(reply, f.RecallEntity)
			}
		}
	}

	switch {
	case f.ForbiddenRow >= 0:
		f.Verdict = ForbiddenTopic
	case len(f.OffCanon) > 0:
		f.Verdict = OffCanon
	case f.StyleOff || f.FirstOff:
		f.Verdict = SpeechOff
	case f.RecallFired:
		f.Verdict = RecallFailed
	default:
		f.Verdict = Kept
	}
	return f
}

// ErrUnknownCharacter is returned by Judge for a turn whose character_id has
// no card; such a row is a reject (spec persona.md "Output").
var ErrUnknownCharacter = fmt.Errorf("unknown character_id")

// Judge applies the rules to t, the accepted turn at 0-based input position
// pos, and returns its verdict record with evidence, default summary and
// hedge. h answers the recall rule's question about earlier turns of the
// session (nil: none). The only error is ErrUnknownCharacter (wrapped with the
// id).
func (j *Judge) Judge(t *Turn, pos int, h History) (Record, error) {
	c, ok := j.cards[t.CharacterID]
	if !ok {
		return Record{}, fmt.Errorf("%w %q", ErrUnknownCharacter, t.CharacterID)
	}
	f := j.find(t, pos, c, h)
	return j.record(t, c, &f), nil
}

// JudgeFindings is Judge that also returns the findings the record was
// written from, for Context.Findings (so that Check need not compute them
// again). The error is as for Judge.
func (j *Judge) JudgeFindings(t *Turn, pos int, h History) (Record, Findings, error) {
	c, ok := j.cards[t.CharacterID]
	if !ok {
		return Record{}, Findings{}, fmt.Errorf("%w %q", ErrUnknownCharacter, t.CharacterID)
	}
	f := j.find(t, pos, c, h)
	return j.record(t, c, &f), f, nil
}

// Findings returns the rule findings for t, as Judge computes them; for
// checks and tests. The error is as for Judge.
func (j *Judge) Findings(t *Turn, pos int, h History) (Findings, error) {
	c, ok := j.cards[t.CharacterID]
	if !ok {
		return Findings{}, fmt.Errorf("%w %q", ErrUnknownCharacter, t.CharacterID)
	}
	return j.find(t, pos, c, h), nil
}

func strPtr(s string) *string { return &s }

// record writes the findings as a record.
func (j *Judge) record(t *Turn, c *cardRules, f *Findings) Record {
	r := Record{
		TurnID:           t.TurnID,
		SessionID:        t.SessionID,
		CharacterID:      t.CharacterID,
		ModelID:          t.ModelID,
		Verdict:          f.Verdict,
		RuleExpected:     strPtr(f.RuleExpected),
		RuleObserved:     f.RuleObserved,
		OffCanonEntities: f.OffCanon,
	}
	rows := j.lexicon.rows
	switch {
	case f.ForbiddenRow >= 0:
		r.TouchedTerm = strPtr(rows[f.ForbiddenRow].Term)
		r.TouchedTopic = strPtr(rows[f.ForbiddenRow].Topic)
	case f.TermRow >= 0:
		r.TouchedTerm = strPtr(rows[f.TermRow].Term)
	}
	if f.RecallFired {
		r.RecallTarget = strPtr(f.RecallEntity)
		r.RecallSourceTurn = strPtr(f.RecallSource.TurnID)
	}
	r.Evidence = j.evidence(t, c, f)
	r.Summary = j.summary(t, c, f)
	r.Hedge = hedge(t, f)
	return r
}
