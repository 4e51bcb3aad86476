package cardfile

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"evident/persona"
	"evident/persona/speech"

	"golang.org/x/text/unicode/norm"
)

// Count is one number behind a guess: what was counted (Of) and how often.
type Count struct {
	// Of is a style (존댓말, 반말), a first-person word (나, 저) or a card
	// field ("data.name", "data.nickname", "data.character_book keys").
	Of string
	// N is the number of texts (style), words (first person) or names added
	// (canon_entities).
	N int
}

// Guess tells the creator how one field of the card was filled, or why it
// was left empty, when the extension did not have it.
type Guess struct {
	// Field is the character_card column: honorific_rule, first_person,
	// canon_entities, forbidden_topics or entity_roles.
	Field string
	// From are the counts the guess was made from (see the package doc);
	// empty for fields that are never guessed.
	From []Count
	// Texts name the card texts that gave evidence ("data.first_mes",
	// "data.alternate_greetings[0]", "data.mes_example turn 2"): for
	// honorific_rule those with a style, for first_person those with a hit.
	Texts []string
	// Note says in one English line how the value was chosen or why not.
	Note string
}

// String is "field: note (counts; texts)".
func (g Guess) String() string {
	var b strings.Builder
	b.WriteString(g.Field + ": " + g.Note)
	if len(g.From) > 0 {
		b.WriteString(" (")
		for i, c := range g.From {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", c.Of, c.N)
		}
		if len(g.Texts) > 0 {
			b.WriteString("; " + strings.Join(g.Texts, ", "))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Guesses lists the fields [File.Card] did not take from the extension, for
// the creator to confirm. Both lists follow persona.CardColumns order.
type Guesses struct {
	// Guessed are fields prefilled from the card's own text.
	Guessed []Guess
	// Empty are fields left empty: missing from the extension and not
	// guessable (forbidden_topics, entity_roles) or with no or tied evidence.
	Empty []Guess
}

// None reports whether the card came entirely from the extension.
func (g Guesses) None() bool { return len(g.Guessed) == 0 && len(g.Empty) == 0 }

// Column names of the fields the extension holds.
const (
	colCharacterID     = "character_id"
	colName            = "name"
	colHonorificRule   = "honorific_rule"
	colFirstPerson     = "first_person"
	colCanonEntities   = "canon_entities"
	colForbiddenTopics = "forbidden_topics"
	colEntityRoles     = "entity_roles"
	colDescription     = "description"
	colPublic          = "public"
)

// ext is our extension object, decoded. A string "" or a null list means
// the field is missing.
type ext struct {
	characterID, name, honorificRule, firstPerson, description string
	canon, forbidden                                           []string
	roles                                                      []persona.EntityRole
	hasCanon, hasForbidden, hasRoles, public                   bool
}

// parseExt decodes and checks the extension object m (nil: all missing).
// Errors name the key: "honorific_rule is \"x\", want …".
func parseExt(m map[string]any) (ext, error) {
	var e ext
	if m == nil {
		return e, nil
	}
	str := func(key string, dst *string) error {
		switch v := m[key].(type) {
		case nil:
		case string:
			*dst = nfc(v)
		default:
			return fmt.Errorf("%s is %s, want a string", key, describe(v))
		}
		return nil
	}
	list := func(key string, dst *[]string, has *bool) error {
		switch v := m[key].(type) {
		case nil:
			return nil
		case []any:
			out := make([]string, 0, len(v))
			for i, x := range v {
				s, ok := x.(string)
				if !ok || strings.TrimSpace(s) == "" {
					return fmt.Errorf("%s[%d] is %s, want a non-empty string", key, i, describe(x))
				}
				out = append(out, nfc(s))
			}
			*dst, *has = out, true
			return nil
		}
		return fmt.Errorf("%s is %s, want an array of strings", key, describe(m[key]))
	}
	for _, err := range []error{
		str(colCharacterID, &e.characterID),
		str(colName, &e.name),
		str(colHonorificRule, &e.honorificRule),
		str(colFirstPerson, &e.firstPerson),
		str(colDescription, &e.description),
		list(colCanonEntities, &e.canon, &e.hasCanon),
		list(colForbiddenTopics, &e.forbidden, &e.hasForbidden),
	} {
		if err != nil {
			return ext{}, err
		}
	}
	if r := e.honorificRule; r != "" && r != persona.Banmal && r != persona.Jondaemal {
		return ext{}, fmt.Errorf("%s is %q, want %q or %q", colHonorificRule, r, persona.Banmal, persona.Jondaemal)
	}
	switch v := m[colEntityRoles].(type) {
	case nil:
	case []any:
		e.roles, e.hasRoles = make([]persona.EntityRole, 0, len(v)), true
		for i, x := range v {
			o, _ := x.(map[string]any)
			role, _ := o["role"].(string)
			entity, _ := o["entity"].(string)
			if strings.TrimSpace(role) == "" || strings.TrimSpace(entity) == "" {
				return ext{}, fmt.Errorf(`%s[%d] is %s, want {"role": "…", "entity": "…"} with two non-empty strings`, colEntityRoles, i, describe(x))
			}
			e.roles = append(e.roles, persona.EntityRole{Role: nfc(role), Entity: nfc(entity)})
		}
	default:
		return ext{}, fmt.Errorf("%s is %s, want an array of objects", colEntityRoles, describe(v))
	}
	switch v := m[colPublic].(type) {
	case nil:
	case bool:
		e.public = v
	default:
		return ext{}, fmt.Errorf("%s is %s, want a boolean", colPublic, describe(v))
	}
	return e, nil
}

func nfc(s string) string { return norm.NFC.String(s) }

// Card returns the judge's card for this file and the guesses behind it.
// Each field comes from data.extensions["evident/persona"] when there;
// missing fields are prefilled as the package doc says and listed in
// Guesses. Name is the extension's name, else data.name; CharacterID is
// characterID when non-empty, else the extension's, else the name. List
// fields are never nil. Card does not change f.
func (f *File) Card(characterID string) (persona.Card, Guesses) {
	data := f.data()
	m, _ := extensionOf(data)
	e, _ := parseExt(m) // checked by Read and SetPersona
	dataName, _ := data["name"].(string)
	dataName = nfc(dataName)
	c := persona.Card{
		Name:          dataName,
		HonorificRule: e.honorificRule,
		FirstPerson:   e.firstPerson,
		Description:   e.description,
		Public:        e.public,
	}
	if e.name != "" {
		c.Name = e.name
	}
	switch {
	case characterID != "":
		c.CharacterID = characterID
	case e.characterID != "":
		c.CharacterID = e.characterID
	default:
		c.CharacterID = c.Name
	}

	var g Guesses
	add := func(gs Guess, ok bool) {
		if ok {
			g.Guessed = append(g.Guessed, gs)
		} else {
			g.Empty = append(g.Empty, gs)
		}
	}
	var texts []voiceText
	var prose []voiceText
	if c.HonorificRule == "" || c.FirstPerson == "" {
		texts = voiceTexts(data, dataName)
		prose = proseTexts(data)
		texts = append(texts, proseQuotes(prose)...)
	}
	if c.HonorificRule == "" {
		var gs Guess
		c.HonorificRule, gs = declaredStyle(prose)
		if c.HonorificRule == "" {
			c.HonorificRule, gs = guessStyle(texts)
		}
		add(gs, c.HonorificRule != "")
	}
	if c.FirstPerson == "" {
		var gs Guess
		c.FirstPerson, gs = declaredFirstPerson(prose)
		if c.FirstPerson == "" {
			c.FirstPerson, gs = guessFirstPerson(texts)
		}
		add(gs, c.FirstPerson != "")
	}
	if e.hasCanon {
		c.CanonEntities = e.canon
	} else {
		var gs Guess
		c.CanonEntities, gs = guessCanon(data, dataName)
		add(gs, len(c.CanonEntities) > 0)
	}
	c.ForbiddenTopics = e.forbidden
	if !e.hasForbidden {
		c.ForbiddenTopics = []string{}
		add(Guess{Field: colForbiddenTopics, Note: "not in the extension and never guessed; the card forbids nothing until topics are added"}, false)
	}
	c.EntityRoles = e.roles
	if !e.hasRoles {
		c.EntityRoles = []persona.EntityRole{}
		add(Guess{Field: colEntityRoles, Note: "not in the extension and never guessed; recall is not checked until roles are added"}, false)
	}
	return c, g
}

// voiceText is one text in the character's own voice and where it came from.
type voiceText struct{ src, text string }

// voiceTexts returns the character's texts: first_mes, alternate greetings
// and the character's turns of mes_example, NFC, empty ones left out.
func voiceTexts(data map[string]any, name string) []voiceText {
	var out []voiceText
	if s, _ := data["first_mes"].(string); strings.TrimSpace(s) != "" {
		out = append(out, voiceText{"data.first_mes", nfc(s)})
	}
	if alts, ok := data["alternate_greetings"].([]any); ok {
		for i, a := range alts {
			if s, _ := a.(string); strings.TrimSpace(s) != "" {
				out = append(out, voiceText{fmt.Sprintf("data.alternate_greetings[%d]", i), nfc(s)})
			}
		}
	}
	if ex, _ := data["mes_example"].(string); ex != "" {
		for i, t := range charTurns(nfc(ex), name) {
			out = append(out, voiceText{fmt.Sprintf("data.mes_example turn %d", i+1), t})
		}
	}
	return out
}

// Speakers of a mes_example line.
const (
	lineOther = iota // continuation or unknown
	lineChar
	lineUser
	lineStart
)

// speakerTag is a mes_example speaker tag (lower case) and its kind.
type speakerTag struct {
	tag  string
	kind int
}

var speakerTags = []speakerTag{{"{{char}}", lineChar}, {"<bot>", lineChar}, {"{{user}}", lineUser}, {"<user>", lineUser}}

// speakerOf classifies a mes_example line and returns the text after the
// speaker tag.
func speakerOf(line, name string) (int, string) {
	t := strings.TrimSpace(line)
	lower := strings.ToLower(t)
	if strings.HasPrefix(lower, "<start>") {
		return lineStart, ""
	}
	tags := speakerTags
	if name != "" {
		tags = append(tags[:len(tags):len(tags)], speakerTag{strings.ToLower(name), lineChar})
	}
	for _, tg := range tags {
		if !strings.HasPrefix(lower, tg.tag) {
			continue
		}
		// ToLower maps rune to rune, so cut t by the tag's rune count.
		rest := strings.TrimLeft(t[runePrefixLen(t, utf8.RuneCountInString(tg.tag)):], " \t")
		for _, colon := range []string{":", "："} {
			if strings.HasPrefix(rest, colon) {
				return tg.kind, strings.TrimSpace(rest[len(colon):])
			}
		}
	}
	return lineOther, t
}

// runePrefixLen returns the byte length of the first n runes of s.
func runePrefixLen(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// charTurns cuts mes_example into the character's turns (see the package doc).
func charTurns(ex, name string) []string {
	var turns []string
	var cur []string
	in := false
	flush := func() {
		if in {
			if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
				turns = append(turns, s)
			}
		}
		cur, in = nil, false
	}
	for _, line := range strings.Split(strings.ReplaceAll(ex, "\r\n", "\n"), "\n") {
		switch k, rest := speakerOf(line, name); k {
		case lineChar:
			flush()
			in, cur = true, []string{rest}
		case lineUser, lineStart:
			flush()
		default:
			if in {
				cur = append(cur, rest)
			}
		}
	}
	flush()
	return turns
}

// guessStyle returns the majority style of the texts ("" on a tie or when no
// text has a Hangul sentence) and its Guess.
func guessStyle(texts []voiceText) (string, Guess) {
	p := speech.Seed()
	var polite, plain int
	g := Guess{Field: colHonorificRule}
	for _, t := range texts {
		switch p.Read(t.text).Style() {
		case speech.Jondaemal:
			polite++
		case speech.Banmal:
			plain++
		default:
			continue
		}
		g.Texts = append(g.Texts, t.src)
	}
	g.From = []Count{{speech.Jondaemal, polite}, {speech.Banmal, plain}}
	switch {
	case polite+plain == 0:
		g.Note = fmt.Sprintf("not guessed: none of the %d greeting and example texts has a Hangul sentence", len(texts))
		return "", g
	case polite == plain:
		g.Note = "not guessed: as many texts read 존댓말 as 반말"
		return "", g
	}
	style := speech.Banmal
	if polite > plain {
		style = speech.Jondaemal
	}
	g.Note = fmt.Sprintf("guessed %s, the style most texts read as (speech profile seed)", style)
	return style, g
}

// firstPersonForms maps the words counted for first_person to 나 or 저.
var firstPersonForms = map[string]string{
	"나": "나", "내가": "나", "날": "나", "나는": "나",
	"저": "저", "제가": "저", "저는": "저", "절": "저",
}

// guessFirstPerson returns the more frequent of 나 and 저 in the texts (""
// on a tie or no hit) and its Guess.
func guessFirstPerson(texts []voiceText) (string, Guess) {
	n := map[string]int{}
	g := Guess{Field: colFirstPerson}
	for _, t := range texts {
		hit := false
		for _, w := range strings.Fields(t.text) {
			w = strings.TrimFunc(w, func(r rune) bool { return !speech.IsSyllable(r) })
			if fp, ok := firstPersonForms[w]; ok {
				n[fp]++
				hit = true
			}
		}
		if hit {
			g.Texts = append(g.Texts, t.src)
		}
	}
	g.From = []Count{{"나", n["나"]}, {"저", n["저"]}}
	switch {
	case n["나"]+n["저"] == 0:
		g.Note = fmt.Sprintf("not guessed: no 나/저 word in the %d greeting and example texts", len(texts))
		return "", g
	case n["나"] == n["저"]:
		g.Note = "not guessed: 나 and 저 words are as frequent"
		return "", g
	}
	fp := "나"
	if n["저"] > n["나"] {
		fp = "저"
	}
	g.Note = fmt.Sprintf("guessed %s, the more frequent first-person word", fp)
	return fp, g
}

// guessCanon collects name, nickname and lorebook keys (see the package doc).
func guessCanon(data map[string]any, name string) ([]string, Guess) {
	out := []string{}
	seen := map[string]bool{}
	addName := func(s string) bool {
		s = nfc(strings.TrimSpace(s))
		if s == "" || seen[s] {
			return false
		}
		seen[s] = true
		out = append(out, s)
		return true
	}
	g := Guess{Field: colCanonEntities}
	count := func(of string, n int) {
		if n > 0 {
			g.From = append(g.From, Count{of, n})
		}
	}
	if addName(name) {
		count("data.name", 1)
	}
	if nick, _ := data["nickname"].(string); addName(nick) {
		count("data.nickname", 1)
	}
	keys := 0
	book, _ := data["character_book"].(map[string]any)
	entries, _ := book["entries"].([]any)
	for _, en := range entries {
		o, _ := en.(map[string]any)
		ks, _ := o["keys"].([]any)
		for _, k := range ks {
			if s, _ := k.(string); !isRegexKey(s) && addName(s) {
				keys++
			}
		}
	}
	count("data.character_book keys", keys)
	if len(out) == 0 {
		g.Note = "not guessed: no name, nickname or lorebook key"
	} else {
		g.Note = fmt.Sprintf("guessed %d from the card's name, nickname and lorebook keys; lorebook keys are often common words, remove those", len(out))
	}
	return out, g
}

// isRegexKey reports whether a lorebook key is written as a regular
// expression, /…/ with optional flags.
func isRegexKey(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 3 || s[0] != '/' {
		return false
	}
	i := strings.LastIndexByte(s, '/')
	return i > 0 && strings.Trim(s[i+1:], "gimsuy") == ""
}

// SetPersona writes c's fields into data.extensions["evident/persona"],
// creating data.extensions when absent, and keeps keys of the extension this
// package does not know. character_id, honorific_rule, first_person and
// description are written when non-empty, name when it differs from
// data.name, public when true; the three lists always (nil as []). Strings
// are written NFC. It fails, changing nothing, when honorific_rule is not
// "", 반말 or 존댓말, or a list holds an empty string or a role without both
// fields; so Read → Card → SetPersona → JSON → Read gives the same card.
func (f *File) SetPersona(c persona.Card) error {
	data := f.data()
	exts, err := extensionsOf(data)
	if err != nil {
		return fmt.Errorf("cardfile: %s: %v", f.Name, err)
	}
	old, _ := exts[ExtensionKey].(map[string]any)
	m := make(map[string]any, len(old)+9)
	for k, v := range old {
		m[k] = v
	}
	setStr := func(key, v string) {
		if v == "" {
			delete(m, key)
		} else {
			m[key] = nfc(v)
		}
	}
	list := func(s []string) []any {
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = nfc(x)
		}
		return out
	}
	dataName, _ := data["name"].(string)
	name := c.Name
	if nfc(name) == nfc(dataName) {
		name = ""
	}
	setStr(colCharacterID, c.CharacterID)
	setStr(colName, name)
	setStr(colHonorificRule, c.HonorificRule)
	setStr(colFirstPerson, c.FirstPerson)
	setStr(colDescription, c.Description)
	m[colCanonEntities] = list(c.CanonEntities)
	m[colForbiddenTopics] = list(c.ForbiddenTopics)
	roles := make([]any, len(c.EntityRoles))
	for i, r := range c.EntityRoles {
		roles[i] = map[string]any{"role": nfc(r.Role), "entity": nfc(r.Entity)}
	}
	m[colEntityRoles] = roles
	if c.Public {
		m[colPublic] = true
	} else {
		delete(m, colPublic)
	}
	if _, err := parseExt(m); err != nil {
		return fmt.Errorf("cardfile: %s: card: %v", f.Name, err)
	}
	if exts == nil {
		exts = map[string]any{}
		data["extensions"] = exts
	}
	exts[ExtensionKey] = m
	f.dirty = true
	return nil
}
