package games

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/arc/api"
	"evident/arc/frame"
	"evident/arc/score"
	"evident/arc/session"
)

// Defaults of Config and limits of the official API.
const (
	// DefaultScorecardIdle is how long a scorecard stays open without a
	// command (spec arc.md: "Scorecards close after 15 min idle"; arc_agi
	// scorecard.py DEFAULT_STALE_MINUTES).
	DefaultScorecardIdle = 15 * time.Minute
	// DefaultScorecardMaxOpen is how long a scorecard stays open at most
	// (arc_agi scorecard.py DEFAULT_MAX_OPEN_FOR_MINUTES: 3 days).
	DefaultScorecardMaxOpen = 72 * time.Hour
	// AffinityCookie is the cookie the server sets on every response that
	// lacks it, standing in for the real server's session-affinity cookie.
	AffinityCookie = "arc_affinity"
	// AnonymousAPIKey is what GET api.PathAnonKey hands out. It is
	// accepted like any other key when Config.APIKey is "", and refused
	// (401) when a key is configured.
	AnonymousAPIKey = "00000000-0000-4000-8000-anonymous000"
	// MaxReasoningBytes bounds action_input.reasoning as compact JSON
	// (ARC-AGI-3-Agents structs.py MAX_REASONING_BYTES); larger is 400
	// VALIDATION_ERROR.
	MaxReasoningBytes = 16 * 1024
	// MaxOpaqueBytes bounds a scorecard's opaque as compact JSON (arc_agi
	// api.py MAX_OPAQUE_BYTES).
	MaxOpaqueBytes = 16 * 1024
	// DefaultFPS is every game's EnvironmentInfo default_fps (the
	// toolkit's own default, models.py).
	DefaultFPS = 5
	// DefaultMaxScorecards bounds the open scorecards of a server when
	// Config.MaxScorecards is 0.
	DefaultMaxScorecards = 256
	// DefaultMaxPlays bounds the plays (guids) of one scorecard when
	// Config.MaxPlays is 0.
	DefaultMaxPlays = 64
	// DefaultMaxRuns bounds the runs one scorecard keeps of one game when
	// Config.MaxRuns is 0.
	DefaultMaxRuns = 256
	// maxBody bounds a request body, in bytes.
	maxBody = 1 << 20
	// maxRateKeys is how many API keys the rate limiter tracks before it
	// forgets those without a request in the last minute.
	maxRateKeys = 1024
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
	// ScorecardMaxOpen closes a scorecard this long after it was opened;
	// 0 means DefaultScorecardMaxOpen.
	ScorecardMaxOpen time.Duration
	// MaxScorecards bounds the open scorecards; opening one more closes
	// the one idle longest first (as if it had expired). 0 means
	// DefaultMaxScorecards. The official server has no such count; its
	// rate limit and idle expiry bound it.
	MaxScorecards int
	// MaxPlays bounds the plays (guids) of one scorecard; a RESET without
	// guid beyond it forgets the scorecard's play idle longest, whose guid
	// then answers "game … not found". Its runs stay on the scorecard. 0
	// means DefaultMaxPlays.
	MaxPlays int
	// MaxRuns bounds the runs one scorecard keeps of one game (every full
	// RESET starts a run); beyond it the oldest run that is neither the
	// best (the environment's score) nor the current run of a play is
	// forgotten. 0 means DefaultMaxRuns; it is raised to MaxPlays+2 when
	// smaller, so that a run can always be forgotten.
	MaxRuns int
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
	// Scorecards, Plays and Runs are what the server holds now: open
	// scorecards, live plays (guids) and runs kept on the scorecards, all
	// games together. Each is bounded (Config.MaxScorecards, MaxPlays per
	// scorecard, MaxRuns per game of a scorecard).
	Scorecards, Plays, Runs int
}

// Server is the local game server: an http.Handler speaking the ARC-AGI-3
// REST API (spec arc.md "The real game", "Compatibility facts") for the
// built-in games. It is safe for concurrent use; commands are executed one
// at a time.
type Server struct {
	cfg   Config
	games map[string]*Game
	order []*Game
	mux   *http.ServeMux

	mu     sync.Mutex
	cards  map[string]*card
	plays  map[string]*play
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
	last            time.Time // the last command
}

// NewServer returns a server for cfg.
func NewServer(cfg Config) *Server {
	if cfg.Games == nil {
		cfg.Games = All()
	}
	if cfg.ScorecardIdle <= 0 {
		cfg.ScorecardIdle = DefaultScorecardIdle
	}
	if cfg.ScorecardMaxOpen <= 0 {
		cfg.ScorecardMaxOpen = DefaultScorecardMaxOpen
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxScorecards <= 0 {
		cfg.MaxScorecards = DefaultMaxScorecards
	}
	if cfg.MaxPlays <= 0 {
		cfg.MaxPlays = DefaultMaxPlays
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	cfg.MaxRuns = max(cfg.MaxRuns, cfg.MaxPlays+2)
	s := &Server{cfg: cfg, games: map[string]*Game{}, order: cfg.Games,
		cards: map[string]*card{}, plays: map[string]*play{}, window: map[string][]time.Time{}}
	for _, g := range cfg.Games {
		s.games[g.ID] = g
	}
	m := http.NewServeMux()
	m.HandleFunc("GET "+api.PathGames, s.handleGames)
	m.HandleFunc("GET "+api.PathGames+"/{game}", s.handleGame)
	m.HandleFunc("GET "+api.PathAnonKey, s.handleAnonKey)
	m.HandleFunc("GET "+api.PathHealthcheck, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "okay")
	})
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
	st := s.stats
	st.Scorecards, st.Plays = len(s.cards), len(s.plays)
	for _, c := range s.cards {
		for _, sc := range c.games {
			st.Runs += len(sc.Runs)
		}
	}
	return st
}

// ServeHTTP checks the API key (except for the healthcheck and the
// anonymous key, which the toolkit asks for without one) and the rate
// limit, sets the affinity cookie and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(api.HeaderAPIKey)
	open := r.Method == http.MethodGet && (r.URL.Path == api.PathHealthcheck || r.URL.Path == api.PathAnonKey)
	s.mu.Lock()
	s.stats.Requests++
	retry := s.limit(key)
	s.mu.Unlock()
	if s.cfg.APIKey != "" && key != s.cfg.APIKey && !open {
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
	if len(s.window) >= maxRateKeys {
		for k, w := range s.window {
			if len(w) == 0 || now.Sub(w[len(w)-1]) >= time.Minute {
				delete(s.window, k)
			}
		}
	}
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

// decode reads a JSON body into v.
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

// newID returns a fresh random version-4 UUID. Random, not a counter: the
// ids of a restarted server must never name a card or game of the one
// before it, or a workspace still holding an old guid would play in
// another workspace's game (baseline1's server uses uuid4 too). kind is
// unused but kept in the calls for reading.
func (s *Server) newID(kind string) string {
	_ = kind
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// info is g's EnvironmentInfo as the server lists it.
func info(g *Game) api.EnvironmentInfo {
	return api.EnvironmentInfo{GameID: g.ID, Title: g.Title, DefaultFPS: DefaultFPS,
		Tags: append([]string{}, g.Tags...), BaselineActions: append([]int(nil), g.Baselines...)}
}

func (s *Server) handleGames(w http.ResponseWriter, r *http.Request) {
	out := make([]api.EnvironmentInfo, 0, len(s.order))
	for _, g := range s.order {
		out = append(out, info(g))
	}
	writeJSON(w, out)
}

// Find returns the served game named by id: the game whose ID is id, else
// the first game (in the served order) whose ID starts with id + "-", as
// the official server matches GET /api/games/{id} (arc_agi api.py
// get_game_info), so that "trek" finds "trek-v1". nil when none matches.
func (s *Server) Find(id string) *Game {
	if g := s.games[id]; g != nil {
		return g
	}
	for _, g := range s.order {
		if id != "" && strings.HasPrefix(g.ID, id+"-") {
			return g
		}
	}
	return nil
}

func (s *Server) handleGame(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("game")
	g := s.Find(id)
	if g == nil {
		writeErr(w, http.StatusNotFound, api.CodeServerError, fmt.Sprintf("game %s not found", id))
		return
	}
	writeJSON(w, info(g))
}

func (s *Server) handleAnonKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, api.AnonKeyResponse{APIKey: AnonymousAPIKey})
}

// compactLen is the length of raw as compact JSON, or -1 when it is not
// JSON.
func compactLen(raw json.RawMessage) int {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return -1
	}
	return b.Len()
}

// Flask's answers to a body that request.get_json() cannot read (the
// toolkit's server, arc_agi server.py, is a Flask app; Flask 3.1, debug
// off): no JSON Content-Type is 415, an empty or malformed JSON body 400,
// both as Flask's HTML error pages.
const (
	flask400 = "<!doctype html>\n<html lang=en>\n<title>400 Bad Request</title>\n<h1>Bad Request</h1>\n" +
		"<p>The browser (or proxy) sent a request that this server could not understand.</p>\n"
	flask415 = "<!doctype html>\n<html lang=en>\n<title>415 Unsupported Media Type</title>\n<h1>Unsupported Media Type</h1>\n" +
		"<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application/json&#39;.</p>\n"
)

// MsgOpaqueTooLarge is the official error of a scorecard/open whose opaque
// is over MaxOpaqueBytes as compact JSON (arc_agi api.py new_scorecard: the
// text says 8 KB while the limit is 16 KiB; the body is {"error": MSG}).
const MsgOpaqueTooLarge = "opaque exceeds 8 KB limit"

// MsgBodyNotObject is the official error of a scorecard/open whose body is
// JSON but not an object (arc_agi api.py new_scorecard).
const MsgBodyNotObject = "request body must be a JSON object"

// jsonContentType reports whether r's Content-Type is JSON as Flask's
// is_json reads it: application/json or application/*+json.
func jsonContentType(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}

func writeHTML(w http.ResponseWriter, status int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, page)
}

// handleOpen is POST /api/scorecard/open as arc_agi api.py new_scorecard
// answers it: an empty body is Flask's 415 (no JSON Content-Type) or 400;
// a malformed body 400 (Flask's page); JSON that is not an object 400
// {"error": MsgBodyNotObject}; an opaque over MaxOpaqueBytes 400 {"error":
// MsgOpaqueTooLarge}. Decision: a non-empty JSON body is read whatever its
// Content-Type (curl users; Flask would answer 415).
func (s *Server) handleOpen(w http.ResponseWriter, r *http.Request) {
	var req api.OpenScorecardRequest
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, "scorecard/open: "+err.Error())
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if !jsonContentType(r) {
			writeHTML(w, http.StatusUnsupportedMediaType, flask415)
		} else {
			writeHTML(w, http.StatusBadRequest, flask400)
		}
		return
	}
	var obj map[string]json.RawMessage
	if !json.Valid(body) {
		writeHTML(w, http.StatusBadRequest, flask400)
		return
	}
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		writeJSON400(w, MsgBodyNotObject)
		return
	}
	if raw, ok := obj["opaque"]; ok && compactLen(raw) > MaxOpaqueBytes {
		writeJSON400(w, MsgOpaqueTooLarge)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, "scorecard/open: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	now := s.cfg.Now()
	c := &card{id: s.newID("card"), req: req, opened: now, last: now, games: map[string]*score.Card{}}
	// arc_agi api.py new_scorecard: "agent" is added unless the tags say
	// "human" or "agent".
	c.tags = append([]string{}, req.Tags...)
	if !contains(c.tags, "human") && !contains(c.tags, "agent") {
		c.tags = append(c.tags, "agent")
	}
	for len(s.cards) >= s.cfg.MaxScorecards {
		s.drop(s.idlest())
	}
	s.cards[c.id] = c
	writeJSON(w, api.OpenScorecardResponse{CardID: c.id})
}

// writeJSON400 writes 400 {"error": msg}, the official shape of
// new_scorecard's refusals (no "message").
func writeJSON400(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// expire closes every scorecard idle for ScorecardIdle or open for
// ScorecardMaxOpen (arc_agi scorecard.py get_stale_cards); closing forgets
// the card and its plays, as an explicit close does. s.mu must be held.
func (s *Server) expire() {
	now := s.cfg.Now()
	for id, c := range s.cards {
		if now.Sub(c.last) >= s.cfg.ScorecardIdle || now.Sub(c.opened) >= s.cfg.ScorecardMaxOpen {
			s.drop(id)
		}
	}
}

// idlest is the id of the open scorecard idle longest (ties: the oldest
// id). s.mu must be held and a card open.
func (s *Server) idlest() string {
	var best *card
	for _, c := range s.cards {
		if best == nil || c.last.Before(best.last) || (c.last.Equal(best.last) && c.id < best.id) {
			best = c
		}
	}
	return best.id
}

// admit makes room for one more play on c: beyond MaxPlays it forgets c's
// play idle longest (ties: the oldest guid). s.mu must be held.
func (s *Server) admit(c *card) {
	for {
		var n int
		var idle *play
		for _, p := range s.plays {
			if p.card != c {
				continue
			}
			n++
			if idle == nil || p.last.Before(idle.last) || (p.last.Equal(idle.last) && p.guid < idle.guid) {
				idle = p
			}
		}
		if n < s.cfg.MaxPlays {
			return
		}
		delete(s.plays, idle.guid)
	}
}

// trim keeps at most MaxRuns runs of sc (game g of card c): it forgets the
// oldest run that is neither sc.Best() nor the latest run of a live play.
// s.mu must be held.
func (s *Server) trim(c *card, sc *score.Card) {
	for len(sc.Runs) > s.cfg.MaxRuns {
		keep := map[int]bool{sc.Best(): true}
		live := map[string]bool{}
		for _, p := range s.plays {
			if p.card == c {
				live[p.guid] = true
			}
		}
		for i := len(sc.Runs) - 1; i >= 0; i-- {
			if g := sc.Runs[i].GUID; live[g] {
				keep[i] = true
				delete(live, g)
			}
		}
		i := 0
		for keep[i] {
			i++
		}
		sc.Runs = append(sc.Runs[:i], sc.Runs[i+1:]...)
	}
}

// drop forgets card id and its plays. s.mu must be held.
func (s *Server) drop(id string) {
	delete(s.cards, id)
	for guid, p := range s.plays {
		if p.card.id == id {
			delete(s.plays, guid)
		}
	}
}

func (s *Server) handleClose(w http.ResponseWriter, r *http.Request) {
	var req api.CloseScorecardRequest
	if err := decode(r, &req); err != nil || req.CardID == "" {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, "missing `card_id` in action data")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	c := s.cards[req.CardID]
	if c == nil {
		writeErr(w, http.StatusNotFound, api.CodeValidation, fmt.Sprintf("scorecard %s not found", req.CardID))
		return
	}
	s.drop(c.id)
	writeJSON(w, api.ClosedScorecard{EnvironmentScorecard: s.scorecard(c), Cards: s.legacyCards(c, "")})
}

func (s *Server) handleScorecard(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	id := r.PathValue("card")
	c := s.cards[id]
	if c == nil {
		writeErr(w, http.StatusNotFound, api.CodeServerError, fmt.Sprintf("card_id `%s` not found", id))
		return
	}
	if game := r.PathValue("game"); game != "" {
		writeJSON(w, s.legacy(c, game))
		return
	}
	writeJSON(w, s.scorecard(c))
}

func (s *Server) handleFullFrame(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
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
	if req.GameID == "" {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, "missing `game_id` in action data")
		return
	}
	if len(req.Reasoning) > 0 && compactLen(req.Reasoning) > MaxReasoningBytes {
		writeErr(w, http.StatusBadRequest, api.CodeValidation, fmt.Sprintf("%s: reasoning exceeds %d bytes", name, MaxReasoningBytes))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
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

// notFound is the official answer to a command naming an unknown game,
// guid or scorecard, or one whose scorecard has closed (arc_agi api.py cmd).
func notFound(gameID string) (*api.FrameResponse, int, string, string) {
	return nil, http.StatusBadRequest, api.CodeServerError, fmt.Sprintf("game %s not found", gameID)
}

// reset executes RESET. s.mu must be held. The game_id may be a prefix
// that Find resolves ("trek" for "trek-v1"), as the official server
// resolves a RESET's game_id through arcade.make (arc_agi api.py
// _get_or_create_environment, base.py make). Decisions: the response
// names the full game id (the official one echoes the id sent, and a
// client that goes on with it loses its play there); a level RESET with a
// guid accepts any id that resolves to the guid's game (the official
// server would start a new game under the same guid).
func (s *Server) reset(req cmdRequest) (*api.FrameResponse, int, string, string) {
	var p *play
	full := true
	if req.GUID == "" {
		c, g := s.cards[req.CardID], s.Find(req.GameID)
		if c == nil || g == nil {
			return notFound(req.GameID)
		}
		s.admit(c)
		p = &play{guid: s.newID("guid"), game: g, card: c}
		s.plays[p.guid] = p
		p.restart(s.cfg.Seed, 1)
	} else {
		p = s.plays[req.GUID]
		if p == nil || s.Find(req.GameID) != p.game {
			return notFound(req.GameID)
		}
		if req.CardID != "" && req.CardID != p.card.id {
			return nil, http.StatusBadRequest, api.CodeValidation, fmt.Sprintf("RESET: guid %s belongs to scorecard %s, not %s", p.guid, p.card.id, req.CardID)
		}
		if p.acted && p.state != api.StateWin {
			full = false
			p.restart(s.cfg.Seed, p.level)
		} else {
			p.levelsCompleted = 0
			p.restart(s.cfg.Seed, 1)
		}
	}
	s.stats.Resets++
	resp := p.response(0, nil, nil, []frame.Grid{p.lv.Frame()})
	resp.FullReset = full
	s.record(p, resp)
	return resp, 0, "", ""
}

// record updates the play's scorecard with a response.
func (s *Server) record(p *play, resp *api.FrameResponse) {
	p.card.last = s.cfg.Now()
	p.last = p.card.last
	sc := p.card.game(p.game)
	sc.Update(score.Update{GUID: p.guid, Action: resp.ActionInput.ID, FullReset: resp.FullReset,
		State: resp.State, LevelsCompleted: resp.LevelsCompleted})
	s.trim(p.card, sc)
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
		return nil, http.StatusBadRequest, api.CodeValidation, "missing `guid` for any action other than RESET"
	case p == nil || p.game.ID != req.GameID:
		return notFound(req.GameID)
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
	s.stats.Actions++
	frames, out := p.lv.Act(a)
	p.acted = true
	switch out {
	case Completed:
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
	resp := p.response(id, data, req.Reasoning, frames)
	s.record(p, resp)
	return resp, 0, "", ""
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
