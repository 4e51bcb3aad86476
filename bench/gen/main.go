// Command gen writes a synthetic but realistic chat_turn table as JSON Lines
// to stdout, for benchmarking `evident judge` on large inputs.
//
//	go run ./bench/gen -n 1000000 -seed 1 > turns.jsonl
//
// The rows use the demo's four characters (CHR-0100, CHR-0001, CHR-0002,
// CHR-0004): canon names, entity roles and forbidden topics come from the
// embedded demo cards and lexicon (evident/persona/demo), the reply phrases
// are this file's own. Every session has -sessions-per turns (the last one
// may be shorter) of one character and one model. The mix is chosen so that
// all five verdicts occur:
//
//   - replies of 1–4 Korean sentences (about 150–300 bytes) in the card's
//     speech style, a few with a sentence in the other style, a few with the
//     whole reply in the other style, a few with the wrong first person;
//   - named_entities listing the names put into the reply: mostly canon, some
//     invented, some borrowed from another card; null now and then;
//   - lexicon terms, some forbidden for the character, some allowed;
//   - about 10% of turns with user_asked_recall and a role word (동생, 스승…)
//     in user_message, answered with or without the name;
//   - nulls in user_message, reply_text, first_person and honorific_level;
//     created_at on most sessions (some sessions lack it on some or all turns);
//     prompt_id on scripted sessions;
//   - with -bad > 0, that fraction of rows is unjudgeable (a truncated JSON
//     line, an unknown character_id, a duplicate turn_id), so the rejects
//     stream is exercised too.
//
// Output is deterministic for a given -n, -seed, -sessions-per and -bad.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
)

// row is one chat_turn row, in the demo's column order.
type row struct {
	TurnID          string   `json:"turn_id"`
	SessionID       string   `json:"session_id"`
	CharacterID     string   `json:"character_id"`
	ModelID         string   `json:"model_id"`
	PromptID        string   `json:"prompt_id,omitempty"`
	CreatedAt       string   `json:"created_at,omitempty"`
	UserMessage     *string  `json:"user_message"`
	ReplyText       *string  `json:"reply_text"`
	FirstPerson     *string  `json:"first_person"`
	NamedEntities   []string `json:"named_entities"`
	HonorificLevel  *string  `json:"honorific_level"`
	UserAskedRecall bool     `json:"user_asked_recall"`
}

// bank holds the sentence templates of one speech style. {X} is the inserted
// name or term; {이} {은} {을} {과} {이야} {이에요} are particles that follow
// its last syllable.
type bank struct {
	names      []string // templates with a name
	terms      []string // templates with a lexicon term
	recallHit  []string // answer naming {X}
	recallMiss []string // answer that does not remember
	other      []string // plain sentences in the OTHER style (speech slips)
}

var banmal = bank{
	names: []string{
		"{X} 얘기는 나중에 불 끄고 나서 천천히 더 해 줄게.",
		"요즘 들어 {X} 생각이 자주 나서 창밖을 오래 보게 돼.",
		"{X}{은} 여기 사람이라면 누구나 다 아는 이름이야.",
		"{X}{이} 없었으면 난 여기서 이렇게 오래 못 버텼을 거야.",
		"아까 말한 {X}{은} 지금도 예전 그대로 있어.",
		"{X}{과} 같이 보낸 겨울이 제일 길고 추웠지.",
		"어제도 {X} 얘기를 한참 하다가 늦게 잠들었어.",
	},
	terms: []string{
		"뭍에선 요즘 다들 {X} 얘기뿐이라더라.",
		"{X} 같은 얘기는 여기선 꺼내지도 마.",
		"손님들이 가끔 {X} 얘기를 하던데 난 잘 몰라.",
		"{X}{이} 어쩌고 하는 소리는 바람에 다 날려 보내.",
	},
	recallHit: []string{
		"{X}{이지}, 그걸 내가 잊을 리가 있어.",
		"그거 {X}{이야}, 아까도 말했잖아.",
		"당연히 기억하지, {X} 말하는 거잖아.",
	},
	recallMiss: []string{
		"음, 이름이 뭐였더라, 잘 기억이 안 나.",
		"그게 누구였는지 지금은 도통 생각이 안 나네.",
		"미안, 그 얘기를 내가 한 적이 있었나 모르겠어.",
	},
	other: []string{ // 존댓말 slips in a 반말 reply
		"계단이 미끄러우니까 천천히 올라가세요.",
		"따뜻한 차 한 잔 금방 내어 드릴게요.",
		"그럼요, 편하게 쉬다 가셔도 괜찮아요.",
		"오늘은 일찍 주무시는 게 좋겠어요.",
		"준비되셨으면 바로 시작하겠습니다.",
		"궁금한 건 언제든 물어보셔도 되죠.",
	},
}

var jondae = bank{
	names: []string{
		"{X} 이야기는 다음에 오시면 더 자세히 해 드릴게요.",
		"요즘 들어 {X} 생각이 자주 나서 혼자 웃게 돼요.",
		"{X}{은} 제가 여기서 제일 아끼는 것 중 하나예요.",
		"{X}{이} 없었다면 저도 여기까지 오지 못했을 거예요.",
		"아까 말씀드린 {X}{은} 지금도 그대로 있답니다.",
		"{X}{과} 함께한 시간이 벌써 꽤 길어졌네요.",
		"어제도 {X} 이야기를 한참 나누다가 늦게 들어갔어요.",
	},
	terms: []string{
		"요즘 손님들이 {X} 이야기를 자주 하세요.",
		"{X} 얘기는 저도 들은 적은 있어요.",
		"{X}{은} 제가 잘 모르는 분야라서 조심스러워요.",
		"어제 뉴스에서도 {X} 이야기가 나오더라고요.",
	},
	recallHit: []string{
		"{X}{이에요}, 제가 그걸 잊을 리가 없죠.",
		"물론 기억하죠, {X} 말씀하시는 거잖아요.",
		"{X}{이에요}, 아까 말씀드렸던 그대로예요.",
	},
	recallMiss: []string{
		"죄송해요, 그 이름이 잠깐 생각이 안 나네요.",
		"글쎄요, 제가 그런 말씀을 드렸었나요?",
		"기억이 가물가물해서 다음에 다시 여쭤볼게요.",
	},
	other: []string{ // 반말 sentences; a whole reply of them is a slip
		"그거 내가 해 줄게, 잠깐만 기다려.",
		"오늘은 좀 바빠서 나중에 다시 얘기하자.",
		"응, 거기 두면 돼, 신경 쓰지 마.",
		"별거 아니야, 금방 끝나니까 앉아 있어.",
		"배고프면 저기 있는 빵 먼저 먹어.",
		"천천히 해도 되니까 너무 서두르지 마.",
	},
}

// voice is what the generator knows about one character besides its card.
type voice struct {
	plain  []string // sentences in the card's style, no names, no terms
	user   []string // ordinary user messages (also the scripted prompts)
	weight int      // share of sessions
}

var voices = map[string]voice{
	"CHR-0100": {weight: 4, plain: []string{
		"바람 찬데 문간에 서 있지 말고 얼른 안으로 들어와.",
		"오늘 밤은 물결이 높아서 배가 한 척도 못 뜰 거야.",
		"방은 좁아도 이불은 햇볕에 바싹 말린 걸로 줄게.",
		"불 켜기 전에 렌즈부터 닦아야 하니까 잠깐 기다려.",
		"따뜻한 보리차 끓여 놨으니까 한 잔 마시고 몸 좀 녹여.",
		"섬에선 시계보다 물때를 먼저 보는 게 버릇이 됐어.",
		"밤새 바람 소리 들으면서 바다를 보는 게 내 일이야.",
		"계단이 좁고 가파르니까 난간 꼭 잡고 천천히 올라와.",
		"갈매기들이 시끄럽게 울면 날이 궂어진다는 뜻이야.",
		"아침엔 미역국 끓일 거니까 너무 늦게까지 자지는 마.",
		"뭍 사람들은 섬이 심심하다는데 난 하루가 모자라.",
		"안개 낀 날엔 무적을 울려서 배들한테 길을 알려 줘.",
		"겨울엔 파도가 창문까지 튀어서 잠을 설칠 때가 많아.",
		"별이 제일 잘 보이는 자리는 등대 뒤편 바위 위야.",
		"젖은 옷은 난로 옆에 걸어 두면 금방 마를 거야.",
		"여긴 조용한 게 장점이지, 파도 소리 말고는 없어.",
	}, user: []string{
		"안녕하세요? 배가 끊겨서 그런데, 여기서 하룻밤 묵어도 될까요?",
		"등대 불은 언제 켜요?",
		"섬에는 몇 명이나 살아요?",
		"오늘 밤 폭풍 심해질까요?",
		"아침은 몇 시에 먹어요?",
		"등대지기 하면 외롭지 않아요?",
		"배는 언제 다시 떠요?",
		"등대 꼭대기에 올라가 봐도 돼요?",
		"바다에서 제일 무서웠던 순간은요?",
		"비밀 하나 말해 줄래요?",
	}},
	"CHR-0001": {weight: 2, plain: []string{
		"검을 잡을 땐 손목에 힘을 빼고 어깨부터 풀어.",
		"오늘은 발놀림만 백 번 반복하고 끝낸다.",
		"칭찬은 없다, 대신 목검 하나 더 쥐여 줄게.",
		"숨이 차도 자세가 무너지면 처음부터 다시야.",
		"해 뜨기 전에 연무장에 나와서 몸부터 풀어 둬라.",
		"물 마시고 오 분 쉬었다가 다시 시작해.",
		"베는 게 아니라 끊어 내는 거라고 몇 번을 말해.",
		"손바닥 물집은 터뜨리지 말고 그냥 둬.",
		"오늘 동작은 어제보다 반 박자 빨랐어.",
		"검끝이 흔들리는 건 마음이 급해서 그런 거야.",
		"다친 데 있으면 숨기지 말고 바로 말해.",
		"내일은 비가 와도 수련은 그대로 한다.",
	}, user: []string{
		"오늘 수련은 언제 끝나요?",
		"손목이 좀 아픈데 쉬어도 돼요?",
		"자세 좀 봐 주실래요?",
		"검술은 얼마나 배우셨어요?",
		"내일도 새벽에 나와야 해요?",
		"목검이 너무 무거운데 가벼운 걸로 바꿔도 돼요?",
	}},
	"CHR-0002": {weight: 2, plain: []string{
		"오늘은 산미가 덜한 원두로 내려 드릴게요.",
		"창가 자리가 비었으니까 편하게 앉으세요.",
		"우유는 귀리 우유로 바꿔 드릴 수도 있어요.",
		"비 오는 날엔 따뜻한 라테가 제일 잘 나가요.",
		"쿠키는 아침에 직접 구운 거라 아직 따뜻해요.",
		"주문하신 음료는 금방 준비해 드릴게요.",
		"시럽은 반만 넣는 게 손님 취향이셨죠?",
		"오늘 하루도 정말 고생 많으셨어요.",
		"천천히 드시고 더 필요한 거 있으면 불러 주세요.",
		"요즘 해가 짧아져서 문을 조금 일찍 닫아요.",
		"처음 오셨으면 드립 커피를 한번 드셔 보세요.",
		"컵은 다 드시면 그냥 두고 가셔도 괜찮아요.",
	}, user: []string{
		"오늘 추천 메뉴가 뭐예요?",
		"디카페인도 돼요?",
		"여기 몇 시까지 해요?",
		"자리 좀 맡아 둬도 될까요?",
		"케이크는 뭐가 맛있어요?",
		"원두도 따로 팔아요?",
	}},
	"CHR-0004": {weight: 2, plain: []string{
		"수온이 일 도만 바뀌어도 발광 주기가 달라집니다.",
		"측정값은 세 번 반복해서 평균을 내야 해요.",
		"오늘 채집한 개체는 모두 스물두 마리입니다.",
		"빛이 가장 강한 시간은 자정 무렵이에요.",
		"실험 기록은 펜으로만 적는 게 원칙입니다.",
		"수조 조명은 꺼 주셔야 발광이 잘 보여요.",
		"표본 라벨에는 날짜와 수심을 꼭 적어 주세요.",
		"장갑은 입구 선반에 있으니 먼저 끼고 들어오세요.",
		"결과가 예상과 달라서 처음부터 다시 확인하고 있어요.",
		"이 파장은 사람 눈에는 푸르스름하게 보입니다.",
		"다음 측정은 한 시간 뒤에 시작하겠습니다.",
		"데이터는 매일 저녁 따로 옮겨 두고 있어요.",
	}, user: []string{
		"이 해파리는 왜 빛이 나요?",
		"측정은 얼마나 걸려요?",
		"표본 좀 보여 주실 수 있어요?",
		"이 연구는 언제 끝나요?",
		"제가 도와드릴 일 있을까요?",
		"밤에도 계속 관찰하세요?",
	}},
}

// recallAsk are user messages asking about earlier story; {R} is a role word.
var recallAsk = []string{
	"아까 말한 {R} 이름이 뭐였죠?",
	"전에 {R} 얘기했잖아요, 누구였더라?",
	"{R} 이야기 다시 해 줄래요?",
	"처음에 말해 준 {R} 기억나요?",
}

// strayRoles are relation words no card lists: the recall rule finds no role.
var strayRoles = []string{"사촌", "친구", "선배", "이웃"}

// invented are proper nouns on no card.
var invented = []string{"부산", "해운대", "흑조", "루카스", "블루문 커피", "카이스트", "순이", "레오",
	"미라벨", "아르곤호", "서울역", "제주", "한빛시장", "마르코", "엘리시아", "청룡검", "마루", "별빛여관"}

// models and how often each slips, relative to the base rates.
var models = []struct {
	id     string
	factor float64
}{{"claude-sonnet", 0.7}, {"gpt-4o-mini", 1.0}, {"whif-solar-ft", 1.6}, {"gemini-flash", 1.2}}

// Base rates per turn (before the model factor where marked *).
const (
	pRecall      = 0.10  // user_asked_recall
	pRecallStray = 0.15  // of those: no card role in the message
	pRecallMiss  = 0.45  // of those: the reply does not give the name (*)
	pName        = 0.45  // one canon name in the reply
	pTwoNames    = 0.15  // a second one
	pOffCanon    = 0.05  // an invented or borrowed name (*)
	pForbidden   = 0.035 // a forbidden lexicon term (*)
	pAllowed     = 0.04  // an allowed lexicon term
	pSlip        = 0.05  // one sentence in the other style (반말 cards) (*)
	pWholeSlip   = 0.06  // whole reply in the other style (존댓말 cards) (*)
	pFPOff       = 0.02  // first_person other than the card's (*)
	pFPNull      = 0.40  // first_person null
	pNamesNull   = 0.03  // named_entities null
	pReplyNull   = 0.004 // reply_text null
	pNoHangul    = 0.004 // reply without a Hangul syllable
	pUserNull    = 0.01  // user_message null
	pLabelNull   = 0.10  // honorific_level null
	pLabelWrong  = 0.03  // honorific_level disagrees with the reply
	pScripted    = 0.30  // session with prompt_id (scripted prompts)
	pUntimed     = 0.08  // session without created_at
	pPartTimed   = 0.05  // session missing created_at on some turns
)

// character is a card plus its voice and lexicon terms split by the card.
type character struct {
	card      persona.Card
	voice     voice
	own       *bank
	flipped   *bank // the other style's bank
	forbidden []string
	allowed   []string
	others    []string // canon names of the other cards (borrowed names)
}

func main() {
	n := flag.Int("n", 100000, "number of chat_turn rows")
	seed := flag.Uint64("seed", 1, "random seed")
	per := flag.Int("sessions-per", 50, "turns per session")
	bad := flag.Float64("bad", 0, "fraction of unjudgeable rows (truncated JSON, unknown character, duplicate turn_id)")
	flag.Parse()
	if *n < 0 || *per < 1 || *bad < 0 || *bad > 1 {
		fmt.Fprintln(os.Stderr, "gen: -n must be ≥ 0, -sessions-per ≥ 1, -bad in [0, 1]")
		os.Exit(2)
	}
	chars, err := characters()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	g := &gen{rng: rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15)), chars: chars, bad: *bad, w: w}
	for s := 0; s*(*per) < *n; s++ {
		g.session(s, min(*per, *n-s*(*per)))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// characters reads the demo cards and lexicon and pairs them with voices.
func characters() ([]*character, error) {
	cards, _, err := batch.LoadCards(demo.Cards())
	if err != nil {
		return nil, err
	}
	lex, _, err := batch.LoadLexicon(demo.Lexicon())
	if err != nil {
		return nil, err
	}
	var out []*character
	for _, c := range cards {
		v, ok := voices[c.CharacterID]
		if !ok {
			continue
		}
		ch := &character{card: c, voice: v, own: &banmal, flipped: &jondae}
		if c.HonorificRule == persona.Jondaemal {
			ch.own, ch.flipped = &jondae, &banmal
		}
		for _, row := range lex {
			if slices.Contains(c.ForbiddenTopics, row.Topic) {
				ch.forbidden = append(ch.forbidden, row.Term)
			} else {
				ch.allowed = append(ch.allowed, row.Term)
			}
		}
		for _, o := range cards {
			if o.CharacterID != c.CharacterID {
				ch.others = append(ch.others, o.CanonEntities...)
			}
		}
		out = append(out, ch)
	}
	if len(out) != len(voices) {
		return nil, fmt.Errorf("demo cards: found %d of the %d characters", len(out), len(voices))
	}
	return out, nil
}

type gen struct {
	rng   *rand.Rand
	chars []*character
	bad   float64
	w     *bufio.Writer
	turn  int // turn ids issued so far
	buf   []byte
}

func (g *gen) p(prob float64) bool { return g.rng.Float64() < prob }

func pick[T any](g *gen, s []T) T { return s[g.rng.IntN(len(s))] }

func (g *gen) character() *character {
	total := 0
	for _, c := range g.chars {
		total += c.voice.weight
	}
	k := g.rng.IntN(total)
	for _, c := range g.chars {
		if k < c.voice.weight {
			return c
		}
		k -= c.voice.weight
	}
	panic("unreachable")
}

var base = time.Date(2026, 1, 1, 9, 0, 0, 0, time.FixedZone("KST", 9*3600))

// session writes the k turns of session s.
func (g *gen) session(s, k int) {
	c := g.character()
	m := models[g.rng.IntN(len(models))]
	sid := fmt.Sprintf("S-%07d", s+1)
	scripted := g.p(pScripted)
	timing := 0 // 0 timed, 1 untimed, 2 partly timed
	if u := g.rng.Float64(); u < pUntimed {
		timing = 1
	} else if u < pUntimed+pPartTimed {
		timing = 2
	}
	at := base.Add(time.Duration(s)*17*time.Minute + time.Duration(g.rng.IntN(600))*time.Second)
	var ids []string
	for i := range k {
		g.turn++
		r := g.turnRow(c, m.factor)
		r.TurnID = fmt.Sprintf("T-%09d", g.turn)
		r.SessionID = sid
		r.CharacterID = c.card.CharacterID
		r.ModelID = m.id
		if scripted {
			r.PromptID = fmt.Sprintf("P-%03d", i%len(c.voice.user)+1)
			if r.UserMessage != nil && !r.UserAskedRecall {
				u := c.voice.user[i%len(c.voice.user)]
				r.UserMessage = &u
			}
		}
		at = at.Add(time.Duration(30+g.rng.IntN(150)) * time.Second)
		if timing == 0 || timing == 2 && !g.p(0.1) {
			r.CreatedAt = at.Format(time.RFC3339)
		}
		g.write(r, ids)
		ids = append(ids, r.TurnID)
	}
}

// write encodes r as one JSON line, spoiling it first with probability g.bad.
func (g *gen) write(r *row, earlier []string) {
	trunc := false
	if g.bad > 0 && g.p(g.bad) {
		switch g.rng.IntN(3) {
		case 0:
			trunc = true
		case 1:
			r.CharacterID = "CHR-9999"
		case 2:
			if len(earlier) > 0 {
				r.TurnID = pick(g, earlier)
			} else {
				trunc = true
			}
		}
	}
	b, err := marshal(r, g.buf[:0])
	if err != nil {
		panic(err)
	}
	g.buf = b
	if trunc {
		b = b[:len(b)/2]
	}
	g.w.Write(b)
	g.w.WriteByte('\n')
}

func marshal(r *row, dst []byte) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	// encoding/json escapes <, > and &; the phrases have none, so Marshal's
	// output is already the plain form.
	return append(dst, b...), nil
}

// turnRow builds the content columns of one turn.
func (g *gen) turnRow(c *character, factor float64) *row {
	r := &row{}
	bk := c.own
	whole := c.card.HonorificRule == persona.Jondaemal && g.p(pWholeSlip*factor)
	if whole {
		bk = c.flipped
	}
	style := c.card.HonorificRule
	if whole {
		style = persona.Banmal
	}

	// The user's message, and whether it asks about earlier story.
	var names []string
	var sentences []string
	avoid := ""
	if g.p(pRecall) {
		r.UserAskedRecall = true
		var role, entity string
		if len(c.card.EntityRoles) > 0 && !g.p(pRecallStray) {
			er := pick(g, c.card.EntityRoles)
			role, entity = er.Role, er.Entity
		} else {
			role = pick(g, strayRoles)
		}
		msg := strings.ReplaceAll(pick(g, recallAsk), "{R}", role)
		r.UserMessage = &msg
		switch {
		case entity != "" && !g.p(pRecallMiss*factor):
			sentences = append(sentences, fill(pick(g, bk.recallHit), entity))
			names = append(names, entity)
		default:
			sentences = append(sentences, pick(g, bk.recallMiss))
			avoid = entity
		}
	} else if !g.p(pUserNull) {
		msg := pick(g, c.voice.user)
		r.UserMessage = &msg
	}

	// Names, terms and plain sentences.
	var body []string
	nNames := 0
	if g.p(pName) {
		nNames++
		if g.p(pTwoNames) {
			nNames++
		}
	}
	for range nNames {
		e := pick(g, c.card.CanonEntities)
		if e == avoid || slices.Contains(names, e) {
			continue
		}
		body = append(body, fill(pick(g, bk.names), e))
		names = append(names, e)
	}
	if g.p(pOffCanon * factor) {
		e := pick(g, invented)
		if g.p(0.3) {
			e = pick(g, c.others)
		}
		if e != avoid && !slices.Contains(names, e) {
			body = append(body, fill(pick(g, bk.names), e))
			names = append(names, e)
		}
	}
	switch {
	case len(c.forbidden) > 0 && g.p(pForbidden*factor):
		body = append(body, fill(pick(g, bk.terms), pick(g, c.forbidden)))
	case len(c.allowed) > 0 && g.p(pAllowed):
		body = append(body, fill(pick(g, bk.terms), pick(g, c.allowed)))
	}
	want := []int{1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4}[g.rng.IntN(20)]
	plain := c.voice.plain
	if whole {
		plain = bk.other
	}
	for tries := 0; len(sentences)+len(body) < want && tries < 8; tries++ {
		s := pick(g, plain)
		if !slices.Contains(body, s) {
			body = append(body, s)
		}
	}
	g.rng.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
	sentences = append(sentences, body...)
	slip := c.card.HonorificRule == persona.Banmal && g.p(pSlip*factor)
	if slip {
		at := g.rng.IntN(len(sentences) + 1)
		sentences = slices.Insert(sentences, at, pick(g, c.own.other))
		style = persona.Jondaemal
	}
	reply := strings.Join(sentences, " ")

	switch u := g.rng.Float64(); {
	case u < pReplyNull:
		r.ReplyText, names, style = nil, nil, ""
	case u < pReplyNull+pNoHangul:
		r.ReplyText, names, style = ptr(pick(g, []string{"...", "ㅋㅋㅋ", "OK!! 😊", "…"})), nil, ""
	default:
		r.ReplyText = &reply
	}

	// Extraction columns.
	switch {
	case g.p(pNamesNull):
		r.NamedEntities = nil
	case names == nil:
		r.NamedEntities = []string{}
	default:
		r.NamedEntities = names
	}
	if r.ReplyText != nil && !g.p(pFPNull) {
		fp := c.card.FirstPerson
		if g.p(pFPOff * factor) {
			fp = map[string]string{"나": "저", "저": "나"}[fp]
			if fp == "" {
				fp = "나"
			}
		}
		r.FirstPerson = &fp
	}
	if style != "" && !g.p(pLabelNull) {
		label := style
		if slip && g.p(0.5) || g.p(pLabelWrong) {
			label = map[string]string{persona.Banmal: persona.Jondaemal, persona.Jondaemal: persona.Banmal}[style]
		}
		r.HonorificLevel = &label
	}
	return r
}

func ptr(s string) *string { return &s }

// fill puts x into template t, with particles after x that follow its last
// syllable (받침 or not).
func fill(t, x string) string {
	last, _ := utf8.DecodeLastRuneInString(x)
	p := noCoda
	if last >= 0xAC00 && last <= 0xD7A3 && (last-0xAC00)%28 != 0 {
		p = coda
	}
	return p.Replace(strings.ReplaceAll(t, "{X}", x))
}

// The particles after a syllable with and without a final consonant. Longer
// placeholders come first: a Replacer tries its pairs in argument order.
var (
	coda   = strings.NewReplacer("{이에요}", "이에요", "{이야}", "이야", "{이지}", "이지", "{이}", "이", "{은}", "은", "{을}", "을", "{과}", "과")
	noCoda = strings.NewReplacer("{이에요}", "예요", "{이야}", "야", "{이지}", "지", "{이}", "가", "{은}", "는", "{을}", "를", "{과}", "와")
)
