package games

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/arc/api"
	"evident/arc/frame"
	"evident/arc/session"
)

// Defaults of Config.
const (
	// DefaultScorecardIdle is how long a scorecard stays open without a
	// command (spec arc.md: "Scorecards close after 15 min idle").
	DefaultScorecardIdle = 15 * time.Minute
	// AffinityCookie is the cookie the server sets on every response that
	// lacks it, standing in for the real server's session-affinity cookie.
	AffinityCookie = "arc_affinity"
	// maxBody bounds a request body, in bytes.
	maxBody = 1 << 20
)

// Config configures a Server.
type Config struct {
	// Seed chooses the levels (see Game); 0 plays them as drawn.
	Seed uint64
	// Games are the games served; nil means All().
	Games []*Game
	// APIKey, when not "", is the only X-API-Key accepted (401 otherwise);
	// "" accepts any key or none.
	APIKey string
	// RateLimit is the number of requests per minute allowed per API key
	// (429 RATE_LIMIT_EXCEEDED with Retry-After beyond it); 0 means no
	// limit. The real server allows 600.
	RateLimit int
	// ScorecardIdle closes a scorecard after this long without a command;
	// 0 means DefaultScorecardIdle.
	ScorecardIdle time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Stats counts what the server received, for tests and logs.
type Stats struct {
	// Requests is every HTTP request, rejected ones included.
	Requests int
	// Resets and Actions are the RESET and ACTION1..7 commands the games
	// executed (rejected commands are not counted).
	Resets, Actions int
}

// Server is the local game server: an http.Handler speaking the ARC-AGI-3
// REST API (spec arc.md "The real game") for the built-in games. It is safe
// for concurrent use; commands are executed one at a time.
type Server struct {
	cfg   Config
	games map[string]*Game
	order []*Game
	mux   *http.ServeMux

	mu     sync.Mutex
	cards  map[string]*card
	plays  map[string]*play
	seq    int
	stats  Stats
	window map[string][]time.Time
}

// play is one game started by a RESET without guid.
type play struct {
	guid            string
	game            *Game
	card            *card
	level           int // the level being played, 1-based (the last one once won)
	levelsCompleted int
	state           string
	acted           bool // an action was taken since the level started
	lv              Level
}

// card is one scorecard.
type card struct {
	id     string
	req    api.OpenScorecardRequest
	last   time.Time
	closed bool
	games  map[string]*cardGame
	order  []string
}

// cardGame is what a scorecard knows about one game.
type cardGame struct {
	game      *Game
	plays     int
	resets    int
	actions   []int  // per level (index level-1): commands sent while on it, RESETs included
	completed []bool // per level
}

// NewServer returns a server for cfg.
func NewServer(cfg Config) *Server {
	if cfg.Games == nil {
		cfg.Games = All()
	}
	if cfg.ScorecardIdle <= 0 {
		cfg.ScorecardIdle = DefaultScorecardIdle
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, games: map[string]*Game{}, order: cfg.Games,
		cards: map[string]*card{}, plays: map[string]*play{}, window: map[string][]time.Time{}}
	for _, g := range cfg.Games {
		s.games[g.ID] = g
	}
	m := http.NewServeMux()
	m.HandleFunc("GET "+api.PathGames, s.handleGames)
	m.HandleFunc("POST "+api.PathScorecardOpen, s.handleOpen)
	m.HandleFunc("POST "+api.PathScorecardClose, s.handleClose)
	m.HandleFunc("GET "+api.PathScorecard+"{card}", s.handleScorecard)
	m.HandleFunc("GET "+api.PathScorecard+"{card}/{game}", s.handleScorecard)
	m.HandleFunc("POST "+api.PathCmd+"{action}", s.handleCmd)
	m.HandleFunc("GET "+api.PathFullFrame+"{guid}", s.handleFullFrame)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	s.mux = m
	return s
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ServeHTTP checks the API key and the rate limit, sets the affinity
// cookie and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(api.HeaderAPIKey)
	s.mu.Lock()
	s.stats.Requests++
	retry := s.limit(key)
	s.mu.Unlock()
	if s.cfg.APIKey != "" && key != s.cfg.APIKey {
		writeErr(w, http.StatusUnauthorized, api.CodeUnauthorized, "missing or wrong "+api.HeaderAPIKey+" header")
		return
	}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeErr(w, http.StatusTooManyRequests, api.CodeRateLimited,
			fmt.Sprintf("more than %d requests a minute; retry after %d s", s.cfg.RateLimit, retry))
		return
	}
	if _, err := r.Cookie(AffinityCookie); err != nil {
		http.SetCookie(w, &http.Cookie{Name: AffinityCookie, Value: "local-1", Path: "/", HttpOnly: true})
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	s.mux.ServeHTTP(w, r)
}

// limit records a request of key and returns 0, or the seconds to wait
// when the key is over the rate limit. s.mu must be held.
func (s *Server) limit(key string) int {
	if s.cfg.RateLimit <= 0 {
		return 0
	}
	now := s.cfg.Now()
	win := s.window[key]
	for len(win) > 0 && now.Sub(win[0]) >= time.Minute {
		win = win[1:]
	}
	if len(win) >= s.cfg.RateLimit {
		s.window[key] = win
		return max(1, int(math.Ceil((time.Minute - now.Sub(win[0])).Seconds())))
	}
	s.window[key] = append(win, now)
	return 0
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(api.ErrorBody{Error: code, Message: msg})
}

// decode reads a JSON body into v, rejecting unknown trailing data.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return errors.New("empty body; want a JSON object")
	}
	return json.Unmarshal(body, v)
}

// newID returns a fresh identifier shaped like a UUID, deterministic for
// the server's seed and the order of requests. s.mu must be held.
func (s *Server) newID(kind string) string {
	s.seq++
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", kind, s.cfg.Seed)
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", h.Sum32(), s.seq)
}

func (s *Server) handleGames(w http.ResponseWriter, r *http.Request) {
	out := make([]api.GameInfo, 0, len(s.order))
	for _, g := range s.order {
		out = append(out, api.GameInfo{GameID: g.ID, Title: g.Title})
	}
	writeJSON(w, out)
}

func (s *Server) handleOpen(w http.ResponseWriter, r *http.Request) {
	var req api.OpenScorecardRequest
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			writeErr(w, http.StatusBadRequest, api.CodeValidation, "scorecard/open: "+err.Error())
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &card{id: s.newID("card"), req: req, last: s.cfg.Now(), games: map[string]*cardGame{}}
	s.cards[c.id] = c
	writeJSON(w, api.OpenScorecardResponse{CardID: c.id})
}

// lookupCard returns the card, closing it first when it has been idle too
// long. s.mu must be held.
func (s *Server) lookupCard(id string) *card {
	c := s.cards[id]
	if c != nil && !c.closed && s.cfg.Now().Sub(c.last) > s.cfg.ScorecardIdle {
		c.closed = true
	}
	return c
}

func (s *Server) handleClose(w http.ResponseWriter, r *http.Request) {
	var req api.CloseScorecardRequest
	if err := decode(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, "scorecard/close: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.lookupCard(req.CardID)
	if c == nil {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no scorecard %q", req.CardID))
		return
	}
	c.closed = true
	writeJSON(w, c.scorecard(""))
}

func (s *Server) handleScorecard(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.lookupCard(r.PathValue("card"))
	if c == nil {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no scorecard %q", r.PathValue("card")))
		return
	}
	game := r.PathValue("game")
	if game != "" && c.games[game] == nil {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("scorecard %s has no game %q", c.id, game))
		return
	}
	writeJSON(w, c.scorecard(game))
}

func (s *Server) handleFullFrame(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.plays[r.PathValue("guid")]
	if p == nil {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no game with guid %q", r.PathValue("guid")))
		return
	}
	g, ok := p.lv.FullFrame()
	if !ok {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("level %d of %s fits the view; it has no full frame", p.level, p.game.ID))
		return
	}
	writeJSON(w, api.FullFrameResponse{GameID: p.game.ID, GUID: p.guid, Level: p.level, Frame: api.Rows(g)})
}

// cmdRequest is the union of ResetRequest and ActionRequest.
type cmdRequest struct {
	GameID    string          `json:"game_id"`
	CardID    string          `json:"card_id"`
	GUID      string          `json:"guid"`
	X         *int            `json:"x"`
	Y         *int            `json:"y"`
	Reasoning json.RawMessage `json:"reasoning"`
}

func (s *Server) handleCmd(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("action")
	id, ok := api.ActionID(name)
	if !ok {
		writeErr(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("unknown command %q; want RESET or ACTION1..ACTION7", name))
		return
	}
	var req cmdRequest
	if err := decode(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, name+": "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var resp *api.FrameResponse
	var status int
	var code, msg string
	if id == 0 {
		resp, status, code, msg = s.reset(req)
	} else {
		resp, status, code, msg = s.act(name, id, req)
	}
	if resp == nil {
		writeErr(w, status, code, msg)
		return
	}
	writeJSON(w, resp)
}

// reset executes RESET. s.mu must be held.
func (s *Server) reset(req cmdRequest) (*api.FrameResponse, int, string, string) {
	c := s.lookupCard(req.CardID)
	switch {
	case req.CardID == "":
		return nil, http.StatusBadRequest, api.CodeValidation, "RESET: card_id is required (open a scorecard first)"
	case c == nil:
		return nil, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("RESET: no scorecard %q", req.CardID)
	case c.closed:
		return nil, http.StatusBadRequest, api.CodeScorecardClosed, fmt.Sprintf("RESET: scorecard %s is closed", c.id)
	}
	var p *play
	if req.GUID == "" {
		g := s.games[req.GameID]
		if g == nil {
			return nil, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("RESET: no game %q", req.GameID)
		}
		p = &play{guid: s.newID("guid"), game: g, card: c}
		s.plays[p.guid] = p
		c.game(g).plays++
		p.restart(s.cfg.Seed, 1)
		c.game(g).actions[0]++
	} else {
		p = s.plays[req.GUID]
		switch {
		case p == nil:
			return nil, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("RESET: no game with guid %q", req.GUID)
		case p.game.ID != req.GameID:
			return nil, http.StatusBadRequest, api.CodeValidation, fmt.Sprintf("RESET: guid %s plays %s, not %q", p.guid, p.game.ID, req.GameID)
		case p.card != c:
			return nil, http.StatusBadRequest, api.CodeValidation, fmt.Sprintf("RESET: guid %s belongs to scorecard %s, not %s", p.guid, p.card.id, c.id)
		}
		// The RESET counts on the level it was sent from.
		c.game(p.game).actions[p.level-1]++
		if p.acted && p.state != api.StateWin {
			p.restart(s.cfg.Seed, p.level)
		} else {
			p.levelsCompleted = 0
			p.restart(s.cfg.Seed, 1)
		}
	}
	c.game(p.game).resets++
	c.last = s.cfg.Now()
	s.stats.Resets++
	return p.response(0, nil, nil, []frame.Grid{p.lv.Frame()}), 0, "", ""
}

// restart starts level afresh.
func (p *play) restart(seed uint64, level int) {
	p.level, p.lv, p.acted, p.state = level, p.game.NewLevel(seed, level), false, api.StateNotFinished
}

// act executes ACTION1..7. s.mu must be held.
func (s *Server) act(name string, id int, req cmdRequest) (*api.FrameResponse, int, string, string) {
	p := s.plays[req.GUID]
	switch {
	case req.GUID == "":
		return nil, http.StatusBadRequest, api.CodeValidation, name + ": guid is required (send RESET first)"
	case p == nil:
		return nil, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("%s: no game with guid %q", name, req.GUID)
	case p.game.ID != req.GameID:
		return nil, http.StatusBadRequest, api.CodeValidation, fmt.Sprintf("%s: guid %s plays %s, not %q", name, p.guid, p.game.ID, req.GameID)
	}
	if c := s.lookupCard(p.card.id); c.closed {
		return nil, http.StatusBadRequest, api.CodeScorecardClosed, fmt.Sprintf("%s: scorecard %s is closed", name, c.id)
	}
	switch p.state {
	case api.StateGameOver:
		return nil, http.StatusBadRequest, api.CodeGameOver, fmt.Sprintf("%s: the game is in state GAME_OVER; only RESET is accepted", name)
	case api.StateWin:
		return nil, http.StatusBadRequest, api.CodeGameWon, fmt.Sprintf("%s: the game is won (state WIN); only RESET is accepted", name)
	}
	available := false
	for _, a := range p.game.Actions {
		available = available || a == id
	}
	if !available {
		return nil, http.StatusBadRequest, api.CodeNotAvailable, fmt.Sprintf("%s is not available in %s; available_actions %v", name, p.game.ID, p.game.Actions)
	}
	a := session.Action{Name: name}
	var data json.RawMessage
	if name == "ACTION6" {
		if req.X == nil || req.Y == nil || *req.X < 0 || *req.Y < 0 || *req.X > session.ClickMax || *req.Y > session.ClickMax {
			return nil, http.StatusBadRequest, api.CodeValidation, "ACTION6: x and y are required, each 0..63"
		}
		a.X, a.Y = *req.X, *req.Y
		data = fmt.Appendf(nil, `{"x":%d,"y":%d}`, a.X, a.Y)
	}
	cg := p.card.game(p.game)
	cg.actions[p.level-1]++
	p.card.last = s.cfg.Now()
	s.stats.Actions++
	frames, out := p.lv.Act(a)
	p.acted = true
	switch out {
	case Completed:
		cg.completed[p.level-1] = true
		p.levelsCompleted++
		if p.level == p.game.Levels() {
			p.state = api.StateWin
		} else {
			p.restart(s.cfg.Seed, p.level+1)
			frames = append(frames, p.lv.Frame())
		}
	case Lost:
		p.state = api.StateGameOver
	}
	return p.response(id, data, req.Reasoning, frames), 0, "", ""
}

// response builds the FrameResponse of a command.
func (p *play) response(id int, data, reasoning json.RawMessage, frames []frame.Grid) *api.FrameResponse {
	if data == nil {
		data = json.RawMessage(`{}`)
	}
	r := &api.FrameResponse{
		GameID:           p.game.ID,
		GUID:             p.guid,
		State:            p.state,
		LevelsCompleted:  p.levelsCompleted,
		WinLevels:        p.game.Levels(),
		ActionInput:      api.ActionInput{ID: id, Data: data, Reasoning: reasoning},
		AvailableActions: append([]int(nil), p.game.Actions...),
	}
	for _, g := range frames {
		r.Frame = append(r.Frame, api.Rows(g))
	}
	return r
}

// game returns the card's record of g, creating it.
func (c *card) game(g *Game) *cardGame {
	cg := c.games[g.ID]
	if cg == nil {
		cg = &cardGame{game: g, actions: make([]int, g.Levels()), completed: make([]bool, g.Levels())}
		c.games[g.ID] = cg
		c.order = append(c.order, g.ID)
	}
	return cg
}

// Scorecard is the local server's answer to scorecard/close and GET
// scorecard (the real server's shape is not specified; the client passes
// either through as JSON).
type Scorecard struct {
	CardID    string          `json:"card_id"`
	SourceURL string          `json:"source_url,omitempty"`
	Tags      []string        `json:"tags,omitempty"`
	Opaque    json.RawMessage `json:"opaque,omitempty"`
	// Open is false once closed by request or by idling.
	Open bool `json:"open"`
	// Score is the mean of the games' scores (0 with no game).
	Score float64     `json:"score"`
	Games []GameScore `json:"games"`
}

// GameScore is one game of a Scorecard, summed over all its plays.
type GameScore struct {
	GameID          string       `json:"game_id"`
	Plays           int          `json:"plays"`
	Resets          int          `json:"resets"`
	Actions         int          `json:"actions"` // every command, RESETs included
	LevelsCompleted int          `json:"levels_completed"`
	WinLevels       int          `json:"win_levels"`
	Score           float64      `json:"score"`
	Levels          []LevelScore `json:"levels"`
}

// LevelScore is one level of a GameScore.
type LevelScore struct {
	Level     int     `json:"level"`
	Baseline  int     `json:"baseline"`
	Actions   int     `json:"actions"`
	Completed bool    `json:"completed"`
	Score     float64 `json:"score"`
}

// Score is the RHAE of one game (spec arc.md "Scoring (RHAE)"): level l
// scores min(1.15, (baseline_l / actions_l)²) when completed, else 0; the
// game scores Σ l·s_l / Σ l, capped at Σ_{completed} l / Σ l (the completed
// weight). baselines, actions and completed are indexed by level − 1.
func Score(baselines, actions []int, completed []bool) (game float64, levels []float64) {
	levels = make([]float64, len(baselines))
	var num, den, done float64
	for i, b := range baselines {
		w := float64(i + 1)
		den += w
		if completed[i] && actions[i] > 0 {
			r := float64(b) / float64(actions[i])
			levels[i] = math.Min(1.15, r*r)
			num += w * levels[i]
			done += w
		}
	}
	if den == 0 {
		return 0, levels
	}
	return math.Min(num/den, done/den), levels
}

func (c *card) scorecard(only string) Scorecard {
	sc := Scorecard{CardID: c.id, SourceURL: c.req.SourceURL, Tags: c.req.Tags, Opaque: c.req.Opaque, Open: !c.closed, Games: []GameScore{}}
	for _, id := range c.order {
		if only != "" && id != only {
			continue
		}
		cg := c.games[id]
		gs := GameScore{GameID: id, Plays: cg.plays, Resets: cg.resets, WinLevels: cg.game.Levels()}
		var lv []float64
		gs.Score, lv = Score(cg.game.Baselines, cg.actions, cg.completed)
		for i, b := range cg.game.Baselines {
			gs.Actions += cg.actions[i]
			if cg.completed[i] {
				gs.LevelsCompleted++
			}
			gs.Levels = append(gs.Levels, LevelScore{Level: i + 1, Baseline: b, Actions: cg.actions[i], Completed: cg.completed[i], Score: lv[i]})
		}
		sc.Games = append(sc.Games, gs)
		sc.Score += gs.Score
	}
	if len(sc.Games) > 0 {
		sc.Score /= float64(len(sc.Games))
	}
	return sc
}
