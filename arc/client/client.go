package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"evident/arc/agent/policy"
	"evident/arc/api"
	"evident/arc/session"
	"evident/internal/backoff"
	"evident/internal/file"
)

// Files of the client inside the workspace, and defaults.
const (
	// StateFile holds the client's State between commands (JSON).
	StateFile = "client/client_state.json"
	// LockFile is locked for the whole of every start, move and stop.
	LockFile = "client/client.lock"
	// DefaultBaseURL is the real ARC-AGI-3 server.
	DefaultBaseURL = "https://three.arcprize.org"
	// EnvAPIKey and EnvBaseURL are the environment variables the command
	// line reads the API key and the base URL from.
	EnvAPIKey  = "ARC_API_KEY"
	EnvBaseURL = "ARC_BASE_URL"
	// DefaultLockWait is how long a command waits for another one to
	// finish.
	DefaultLockWait = 60 * time.Second
	// lockPoll is the interval between attempts to take the lock.
	lockPoll = 10 * time.Millisecond
)

// Errors of the game client; test with errors.Is.
var (
	// ErrNotStarted: no game was started in this workspace.
	ErrNotStarted = errors.New("no game started in this workspace (run client start)")
	// ErrStopped: the game was stopped (its scorecard closed).
	ErrStopped = errors.New("the game was stopped and its scorecard closed")
	// ErrStarted: start was asked while a game is running.
	ErrStarted = errors.New("a game is already started in this workspace (stop it first)")
	// ErrSessionNotEmpty: start was asked in a workspace whose session
	// already holds attempts of another game.
	ErrSessionNotEmpty = errors.New("client/session already holds attempts; start a new game in a fresh workspace")
	// ErrBusy: another command held the lock for longer than the wait.
	ErrBusy = errors.New("another client command is running in this workspace")
	// ErrGameWon: a non-RESET action after the game was won.
	ErrGameWon = errors.New("the game is won (state WIN): only RESET is accepted")
	// ErrNotAvailable: the action is not in the last available_actions.
	ErrNotAvailable = errors.New("action not in available_actions")
	// ErrNoAPIKey: no API key for a server that is not on this machine.
	ErrNoAPIKey = errors.New("no API key: set " + EnvAPIKey)
)

// Cookie is one saved cookie (name and value; restored for every path).
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// State is the client state file (StateFile): what a later command needs to
// go on with the game. The API key is never stored.
type State struct {
	BaseURL string `json:"base_url"`
	GameID  string `json:"game_id"`
	CardID  string `json:"card_id"`
	GUID    string `json:"guid"`
	// StepIndex is the step_index of the latest metadata, counted as
	// baseline1's server counts it (spec arc.md "Compatibility facts"): 0
	// for the response to the opening RESET, +1 per command after it,
	// RESETs included.
	StepIndex int `json:"step_index"`
	// State, LevelsCompleted, WinLevels and AvailableActions are those of
	// the latest response.
	State            string   `json:"state"`
	LevelsCompleted  int      `json:"levels_completed"`
	WinLevels        int      `json:"win_levels"`
	AvailableActions []int    `json:"available_actions"`
	Cookies          []Cookie `json:"cookies,omitempty"`
	// Stopped is set by Stop, which also keeps the final scorecard.
	Stopped   bool            `json:"stopped,omitempty"`
	Scorecard json.RawMessage `json:"scorecard,omitempty"`
	// LastCommand is when the server last answered a command (RESET or
	// action) of the game, from Options.Now; the scorecard's idle time
	// (ScorecardIdleLimit) runs from it. Zero in state files written
	// before it was kept: the idle time is then unknown and not checked.
	LastCommand time.Time `json:"last_command,omitzero"`
	// Expired is set when the client found the scorecard expired
	// (ExpiredError); every later command is refused the same way, and
	// Start moves the game aside.
	Expired bool `json:"expired,omitempty"`
	// Ended says, in words, why the game can no longer be played from
	// this workspace: the ExpiredError that marked it Expired, or why the
	// session lags the game (Lagging). Later commands repeat it.
	Ended string `json:"ended,omitempty"`
	// Lagging is set when the server may have played a command whose
	// response the session does not hold (the response could not be
	// recorded, could not be read, or never arrived): the session and the
	// game then differ, so no further command is sent (ErrLagging) and
	// Start moves the game aside. The official API has no way to fetch a
	// missed response (baseline1 repairs one step through its own
	// server's /game/last-step).
	Lagging bool `json:"lagging,omitempty"`
}

// Options configures a Client.
type Options struct {
	// Workspace is the agent workspace: the session goes to
	// Workspace/client/session, the state to Workspace/client.
	Workspace string
	// API configures the REST client (key, HTTP client, retries).
	API APIOptions
	// LockWait is how long a command waits for the lock; 0 means
	// DefaultLockWait.
	LockWait time.Duration
	// Now is the clock of the idle checks (State.LastCommand); nil means
	// time.Now. Tests replace it.
	Now func() time.Time
	// Warn receives warnings, one line each (idle time near the limit, a
	// 404 on close, an expired session moved aside); nil discards them.
	Warn io.Writer
}

// MoveOptions are the per-command options of Move.
type MoveOptions struct {
	// Reasoning (any JSON value, or nil) goes to the server with actions.
	Reasoning json.RawMessage
	// Force sends a RESET before the attempt's first action, which the
	// client otherwise refuses (ErrResetBeforeAction).
	Force bool
	// Via says who sends the command, for the agent-run policy
	// (evident/arc/agent/policy; issue 11 item 3): ViaDirect ("", the
	// command line's move), ViaPlanExec (the plan executor, after its
	// prediction) or ViaController (the agent controller's RESET). Without
	// WORKSPACE/agent/policy.json it changes nothing.
	Via string
}

// Who sends a command (MoveOptions.Via).
const (
	ViaDirect     = policy.ViaDirect
	ViaPlanExec   = policy.ViaPlanExec
	ViaController = policy.ViaController
)

// Client is the game client of one workspace (spec arc.md "Session
// recording", "The real game"). Every command runs in its own call, in
// this process or another: state lives in StateFile, the session on disk,
// and LockFile keeps two commands from interleaving.
type Client struct {
	ws   string
	opts Options
}

// New returns the client of opts.Workspace; it does no I/O.
func New(opts Options) (*Client, error) {
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if opts.LockWait <= 0 {
		opts.LockWait = DefaultLockWait
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.API.Now == nil {
		opts.API.Now = opts.Now
	}
	if opts.Warn == nil {
		opts.Warn = io.Discard
	}
	return &Client{ws: ws, opts: opts}, nil
}

// Now returns the client's clock (Options.Now).
func (c *Client) Now() time.Time { return c.opts.Now() }

func (c *Client) warn(format string, args ...any) {
	fmt.Fprintf(c.opts.Warn, format+"\n", args...)
}

// Workspace returns the absolute workspace path.
func (c *Client) Workspace() string { return c.ws }

// SessionRoot returns Workspace/client/session.
func (c *Client) SessionRoot() string { return filepath.Join(c.ws, session.Dir) }

// Result is what one command did.
type Result struct {
	// Action is the command sent.
	Action session.Action
	// Response is the server's answer.
	Response *api.FrameResponse
	// Status is the observed status of the step in its attempt (spec
	// "Session recording"); RUNNING for a RESET.
	Status session.Status
	// Recorded is the attempt that holds the response and its step number
	// there (0 for a RESET: the attempt's initial_* files).
	Recorded session.Position
	// Final and Intermediates are the paths of the recorded frames (.txt);
	// for a RESET Final is initial_frame.txt.
	Final         string
	Intermediates []string
	// Next is where the recorder stands now (after a completed level: the
	// next level's first attempt).
	Next session.Position
	// Metadata is the metadata recorded for the response (step_index
	// included).
	Metadata session.Metadata
	// Files are the absolute paths of the files recorded for the
	// response, in baseline1's order (client.py save_step_artifacts,
	// save_initial_artifacts): metadata, then each frame as PNG then text
	// (intermediates first, the final frame last); for a step that
	// completes a level, then the next level's initial_* files. WriteSummary
	// prints them.
	Files []string
	// State is the client state after the command.
	State State
	// MovedAside is, after a Start in a workspace whose game had expired,
	// where that game's session went (ExpiredSessionPrefix+N); "" else.
	MovedAside string
}

// Held is the client with its lock taken: commands through it cannot
// interleave with those of another Held, in this process or another.
type Held struct {
	c       *Client
	release func() error
}

// Lock takes the workspace's lock, waiting up to Options.LockWait (or until
// ctx is done) for another command to finish; then it fails with ErrBusy.
func (c *Client) Lock(ctx context.Context) (*Held, error) {
	if err := os.MkdirAll(filepath.Join(c.ws, "client"), 0o755); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	path := filepath.Join(c.ws, LockFile)
	deadline := time.Now().Add(c.opts.LockWait)
	for {
		release, ok, err := tryLock(path)
		if err != nil {
			return nil, err
		}
		if ok {
			return &Held{c: c, release: release}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %s stayed locked for %s", ErrBusy, path, c.opts.LockWait)
		}
		if err := backoff.Sleep(ctx, lockPoll); err != nil {
			return nil, fmt.Errorf("client: waiting for %s: %w", path, err)
		}
	}
}

// Unlock releases the lock; the Held must not be used afterwards.
func (h *Held) Unlock() error {
	if h.release == nil {
		return nil
	}
	err := h.release()
	h.release = nil
	return err
}

// maxStateFile bounds the state file, in bytes (it holds a few ids, the
// cookies and the final scorecard).
const maxStateFile = 16 << 20

// ReadState reads the state file; ErrNotStarted when there is none. It
// fails, naming the file, when it is larger than 16 MiB or not the JSON of
// a State.
func (c *Client) ReadState() (*State, error) {
	path := filepath.Join(c.ws, StateFile)
	b, err := file.ReadCapped(path, maxStateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotStarted
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("client: %s: %w", filepath.Join(c.ws, StateFile), err)
	}
	return &st, nil
}

// writeState replaces the state file atomically (mode 0600: it holds
// cookies).
func (c *Client) writeState(st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if err := file.WriteAtomic(filepath.Join(c.ws, StateFile), append(b, '\n')); err != nil {
		return fmt.Errorf("client: write %w", err)
	}
	return nil
}

// newAPI returns the REST client for baseURL with the saved cookies.
func (c *Client) newAPI(baseURL string, st *State) (*API, error) {
	if c.opts.API.Key == "" && !isLocal(baseURL) {
		return nil, fmt.Errorf("client: %w (the server %s is not on this machine)", ErrNoAPIKey, baseURL)
	}
	a, err := NewAPI(baseURL, c.opts.API)
	if err != nil {
		return nil, err
	}
	if st != nil {
		cs := make([]*http.Cookie, 0, len(st.Cookies))
		for _, ck := range st.Cookies {
			cs = append(cs, &http.Cookie{Name: ck.Name, Value: ck.Value})
		}
		a.SetCookies(cs)
	}
	return a, nil
}

// isLocal reports whether baseURL names a loopback host.
func isLocal(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// saveCookies copies the jar's cookies into st.
func saveCookies(st *State, a *API) {
	st.Cookies = st.Cookies[:0]
	for _, ck := range a.Cookies() {
		st.Cookies = append(st.Cookies, Cookie{Name: ck.Name, Value: ck.Value})
	}
}

// apply copies a response's game fields into st.
func apply(st *State, r *api.FrameResponse) {
	if r.GUID != "" {
		st.GUID = r.GUID
	}
	st.State, st.LevelsCompleted, st.WinLevels = r.State, r.LevelsCompleted, r.WinLevels
	st.AvailableActions = append([]int(nil), r.AvailableActions...)
}

// Start starts gameID on the server at baseURL: it resolves gameID
// against GET /api/games (ResolveGameID: the whole id, or the id before its
// "-version"), opens a scorecard with card, sends RESET without guid,
// records the response as level_01_attempt_01 (step_index 0) and writes
// the state file. When the workspace's previous game expired (State.Expired,
// or more than ScorecardIdleLimit since its last command and not stopped),
// its session and state are first moved aside (Result.MovedAside, a
// warning to Options.Warn). It fails with ErrStarted when a game is
// running here, ErrSessionNotEmpty when the session already holds
// attempts, ErrNoAPIKey without a key for a remote server, when gameID
// names no game or several (the candidates listed), or on HTTP and I/O
// errors (a scorecard opened before a failure is closed again, best
// effort).
func (c *Client) Start(ctx context.Context, baseURL, gameID string, card api.OpenScorecardRequest) (*Result, error) {
	h, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Unlock()
	aside := ""
	if st, err := c.ReadState(); err == nil {
		expired := st.Expired || st.Lagging
		if d, ok := st.Idle(c.opts.Now()); ok && d > ScorecardIdleLimit && !st.Stopped {
			expired = true
		}
		switch {
		case expired:
			if aside, err = c.moveAside(); err != nil {
				return nil, err
			}
			if aside != "" {
				c.warn("the expired game %s (scorecard %s): its session is kept in %s", st.GameID, st.CardID, aside)
			}
		case !st.Stopped:
			return nil, fmt.Errorf("client: %w: %s (guid %s)", ErrStarted, st.GameID, st.GUID)
		}
	} else if !errors.Is(err, ErrNotStarted) {
		return nil, err
	}
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return nil, err
	}
	if rec.Position().Level != 0 {
		return nil, fmt.Errorf("client: %w (%s)", ErrSessionNotEmpty, rec.Root())
	}
	a, err := c.newAPI(baseURL, nil)
	if err != nil {
		return nil, err
	}
	games, err := a.Games(ctx)
	if err != nil {
		return nil, err
	}
	if gameID, err = ResolveGameID(games, gameID); err != nil {
		return nil, fmt.Errorf("%w (server %s)", err, a.BaseURL())
	}
	cardID, err := a.OpenScorecard(ctx, card)
	if err != nil {
		return nil, err
	}
	resp, err := a.Reset(ctx, gameID, cardID, "")
	if err != nil {
		a.CloseScorecard(context.WithoutCancel(ctx), cardID)
		return nil, err
	}
	st := &State{BaseURL: a.BaseURL(), GameID: gameID, CardID: cardID, StepIndex: 0, LastCommand: c.opts.Now()}
	apply(st, resp)
	saveCookies(st, a)
	if err := c.writeState(st); err != nil {
		return nil, err
	}
	res, err := h.record(st, session.Action{Name: "RESET"}, resp, rec)
	if res != nil {
		res.MovedAside = aside
	}
	return res, err
}

// Move sends one command (RESET or ACTION1..ACTION7) holding the lock for
// its whole duration; see Held.Move.
func (c *Client) Move(ctx context.Context, act session.Action, reasoning json.RawMessage) (*Result, error) {
	return c.MoveWith(ctx, act, MoveOptions{Reasoning: reasoning})
}

// MoveWith is Move with per-command options; see Held.MoveWith.
func (c *Client) MoveWith(ctx context.Context, act session.Action, mo MoveOptions) (*Result, error) {
	h, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Unlock()
	return h.MoveWith(ctx, act, mo)
}

// Move is MoveWith with reasoning and no other option.
func (h *Held) Move(ctx context.Context, act session.Action, reasoning json.RawMessage) (*Result, error) {
	return h.MoveWith(ctx, act, MoveOptions{Reasoning: reasoning})
}

// MoveWith sends one command and records its response (spec arc.md
// "Session recording"): RESET opens a new attempt folder (of level
// levels_completed+1); any other action becomes the next step of the
// current attempt, and a step that completes a level is also the initial_*
// of the next level's attempt. mo.Reasoning goes to the server with
// actions.
//
// Nothing is sent, and the error says why, when no game is started
// (ErrNotStarted), it was stopped (ErrStopped), its scorecard expired
// (ExpiredError: marked in the state file, or more than ScorecardIdleLimit
// since State.LastCommand by Options.Now), or by baseline1 v1.6's rules
// (client.py validate_action_for_state, move_command; RuleError with
// baseline1's message): a non-RESET action in GAME_OVER (ErrGameOver), a
// RESET before the first action of the current attempt unless mo.Force
// (ErrResetBeforeAction), any command once the current level holds
// MaxLevelActions actions (ErrLevelActionLimit; counted as baseline1 does:
// the step_index of the current attempt's latest metadata minus that of
// the level's attempt 1 initial_metadata.json, RESETs included). Also
// refused: an action after a win (ErrGameWon) or outside the last
// available_actions (ErrNotAvailable).
//
// A command more than IdleWarnAfter after the last one writes a warning to
// Options.Warn first. A 400 of the server because the game is over, in any
// wording, matches ErrGameOver; a 400 or 404 "not found" (or
// SCORECARD_CLOSED) is an ExpiredError with the idle gap, and marks the
// state expired. When the server answered but recording failed, the error
// says so: the session then lags the game.
func (h *Held) MoveWith(ctx context.Context, act session.Action, mo MoveOptions) (*Result, error) {
	if h.release == nil {
		return nil, errors.New("client: Move after Unlock")
	}
	c := h.c
	st, err := c.ReadState()
	if err != nil {
		return nil, err
	}
	if st.Stopped {
		return nil, fmt.Errorf("client: %w; start a new game in a fresh workspace", ErrStopped)
	}
	id, ok := api.ActionID(act.Name)
	if !ok {
		return nil, fmt.Errorf("client: unknown action %q; want RESET or ACTION1..ACTION7", act.Name)
	}
	now := c.opts.Now()
	idle, known := st.Idle(now)
	expired := func(server error) error {
		st.Expired = true
		e := &ExpiredError{GameID: st.GameID, CardID: st.CardID, GUID: st.GUID, Last: st.LastCommand, Idle: idle, Server: server}
		st.Ended = e.Error()
		if werr := c.writeState(st); werr != nil {
			return errors.Join(e, werr)
		}
		return e
	}
	switch {
	case st.Lagging:
		return nil, fmt.Errorf("client: %w: %s; nothing was sent", ErrLagging, st.Ended)
	case st.Expired && st.Ended != "":
		return nil, &ExpiredError{GameID: st.GameID, CardID: st.CardID, GUID: st.GUID, Earlier: st.Ended}
	case st.Expired || (known && idle > ScorecardIdleLimit):
		return nil, expired(nil)
	}
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return nil, err
	}
	pos := rec.Position()
	if act.Name != "RESET" {
		switch {
		case st.State == api.StateGameOver:
			return nil, &RuleError{Msg: MsgOnlyReset, Err: ErrGameOver}
		case st.State == api.StateWin:
			return nil, fmt.Errorf("client: %s not sent: %w", act, ErrGameWon)
		case len(st.AvailableActions) > 0 && !slices.Contains(st.AvailableActions, id):
			return nil, fmt.Errorf("client: %s not sent: %w %v", act, ErrNotAvailable, st.AvailableActions)
		}
	} else if pos.Dir != "" && pos.Step == 0 && !mo.Force {
		return nil, &RuleError{Msg: MsgResetBeforeAction, Err: ErrResetBeforeAction}
	}
	levelN := 0
	if pos.Dir != "" {
		n, err := levelActions(pos)
		if err != nil {
			return nil, err
		}
		if n >= MaxLevelActions {
			return nil, &RuleError{Msg: fmt.Sprintf(msgLevelActionLimitFmt, n, pos.Level, MaxLevelActions), Err: ErrLevelActionLimit}
		}
		levelN = n
	}
	// The agent-run policy (agent/policy.json, written by the agent
	// controller): RESET only by the controller, direct moves within the
	// exploration budget, the run's cap per level; refusals go to the
	// run's transcript. Without the file nothing changes.
	if err := policy.Check(c.ws, policy.Command{Action: act.Name, Text: act.String(), Via: mo.Via, Level: pos.Level, LevelActions: levelN}, c.opts.Now); err != nil {
		return nil, err
	}
	if w := IdleWarning(st, now); w != "" {
		c.warn("%s", w)
	}
	a, err := c.newAPI(st.BaseURL, st)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Once sent, a command is seen through: a cancelled ctx (an
	// interrupted command) must not drop the answer of a move the server
	// played, or the session would lag the game. The HTTP client's timeout
	// (APIOptions.Timeout) still bounds it.
	sendCtx := context.WithoutCancel(ctx)
	var resp *api.FrameResponse
	if act.Name == "RESET" {
		resp, err = a.Reset(sendCtx, st.GameID, st.CardID, st.GUID)
	} else {
		resp, err = a.Act(sendCtx, st.GameID, st.GUID, act, mo.Reasoning)
	}
	saveCookies(st, a)
	if err != nil {
		if gameGone(err) {
			return nil, expired(err)
		}
		if mayHavePlayed(err) {
			return nil, h.lag(st, fmt.Sprintf("the server may have played %s (step_index %d) but its answer was not received", act, st.StepIndex+1), err)
		}
		if errors.Is(err, ErrGameOver) {
			if werr := c.writeState(st); werr != nil {
				return nil, errors.Join(err, werr)
			}
			return nil, fmt.Errorf("client: %s refused: %w (%w)", act, ErrGameOver, err)
		}
		if werr := c.writeState(st); werr != nil {
			return nil, errors.Join(err, werr)
		}
		return nil, err
	}
	if (resp.GUID != "" && st.GUID != "" && resp.GUID != st.GUID) || (resp.GameID != "" && resp.GameID != st.GameID) {
		return nil, h.lag(st, fmt.Sprintf("the server answered %s for game %s (guid %s), not this workspace's game %s (guid %s)",
			act, resp.GameID, resp.GUID, st.GameID, st.GUID), nil)
	}
	st.StepIndex++
	st.LastCommand = c.opts.Now()
	apply(st, resp)
	if err := c.writeState(st); err != nil {
		return nil, fmt.Errorf("client: the server played %s but the state file could not be written: %w", act, err)
	}
	return h.record(st, act, resp, rec)
}

// record writes resp into the session.
func (h *Held) record(st *State, act session.Action, resp *api.FrameResponse, rec *session.Recorder) (*Result, error) {
	res := &Result{Action: act, Response: resp, State: *st, Status: session.Running}
	sr, err := resp.Session(st.StepIndex)
	fail := func(err error) (*Result, error) {
		return nil, h.lag(st, fmt.Sprintf("the server played %s (step_index %d) but its response could not be recorded", act, st.StepIndex), err)
	}
	if err != nil {
		return fail(err)
	}
	res.Metadata = sr.Metadata
	before := rec.Position()
	if act.Name == "RESET" {
		rr, err := rec.RecordReset(sr)
		if err != nil {
			return fail(err)
		}
		pos := rr.Position
		if rr.Warning != "" {
			h.c.warn("%s", rr.Warning)
		}
		res.Recorded, res.Next = pos, pos
		res.Final = filepath.Join(pos.Dir, session.InitialFrameFile)
		res.Files = initialFiles(pos.Dir)
	} else {
		rr, err := rec.RecordStep(sr)
		if err != nil {
			return fail(err)
		}
		pos := rr.Position
		if rr.Warning != "" {
			h.c.warn("%s", rr.Warning)
		}
		k := before.Step + 1
		res.Recorded = session.Position{Level: before.Level, Attempt: before.Attempt, Step: k, Dir: before.Dir}
		res.Next = pos
		res.Status = session.ObservedStatus(sr.Metadata, before.Level)
		if len(sr.Frames) > 0 {
			res.Final = filepath.Join(before.Dir, session.StepFinalFile(k))
		}
		files, err := stepFiles(before.Dir, k)
		if err != nil {
			return fail(err)
		}
		res.Files = files
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), strings.TrimSuffix(session.StepIntermediateFile(k, 0), "00.txt")) && strings.HasSuffix(f, ".txt") {
				res.Intermediates = append(res.Intermediates, f)
			}
		}
		if pos.Dir != before.Dir {
			res.Files = append(res.Files, initialFiles(pos.Dir)...)
		}
	}
	return res, nil
}

// Stop closes the scorecard, marks the state stopped and returns the
// server's final scorecard (raw JSON). A 404 (the server closed the
// scorecard itself: 15 min idle or 3 days open) is a warning to
// Options.Warn, not a failure: the state is marked stopped and the
// scorecard is nil. It fails with ErrNotStarted or ErrStopped, or on other
// HTTP errors (the state then stays running).
func (c *Client) Stop(ctx context.Context) (json.RawMessage, error) {
	h, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Unlock()
	st, err := c.ReadState()
	if err != nil {
		return nil, err
	}
	if st.Stopped {
		return st.Scorecard, fmt.Errorf("client: %w", ErrStopped)
	}
	a, err := c.newAPI(st.BaseURL, st)
	if err != nil {
		return nil, err
	}
	sc, err := a.CloseScorecard(ctx, st.CardID)
	saveCookies(st, a)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		gap := ""
		if d, ok := st.Idle(c.opts.Now()); ok {
			gap = fmt.Sprintf(", %s after the last command", d.Round(time.Second))
		}
		c.warn("warning: the server has no scorecard %s to close (%v%s): it closes a scorecard after %s idle or 3 days open; the game is marked stopped and its session is kept",
			st.CardID, err, gap, ScorecardIdleLimit)
		st.Stopped = true
		return nil, c.writeState(st)
	}
	if err != nil {
		return nil, err
	}
	st.Stopped, st.Scorecard = true, sc
	return sc, c.writeState(st)
}

// Scorecard returns the server's current scorecard of the game (raw JSON).
func (c *Client) Scorecard(ctx context.Context) (json.RawMessage, error) {
	st, err := c.ReadState()
	if err != nil {
		return nil, err
	}
	a, err := c.newAPI(st.BaseURL, st)
	if err != nil {
		return nil, err
	}
	return a.Scorecard(ctx, st.CardID, st.GameID)
}

// Status is what `client status` shows.
type Status struct {
	State State
	// Position is where the recorder stands (the current attempt and its
	// number of steps).
	Position session.Position
	// Frame is the path of the latest settled frame (.txt) of the current
	// attempt, "" when it has none (a GAME_OVER step without frame).
	Frame string
}

// Status reads the state file and the session; it sends nothing.
func (c *Client) Status() (*Status, error) {
	st, err := c.ReadState()
	if err != nil {
		return nil, err
	}
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return nil, err
	}
	s := &Status{State: *st, Position: rec.Position()}
	if p := s.Position; p.Dir != "" {
		path := filepath.Join(p.Dir, session.InitialFrameFile)
		if p.Step > 0 {
			path = filepath.Join(p.Dir, session.StepFinalFile(p.Step))
		}
		if _, err := os.Stat(path); err == nil {
			s.Frame = path
		}
	}
	return s, nil
}

// WriteFullFrame asks the local server's extension (API.FullFrame) for the
// initial full frame of the game's current level and writes it to
// Workspace/initial_full_frames/level_N.txt, returning that path ("" with no
// error when the server has none, as the real server never has). The
// client's own commands never call it: initial_full_frames/ is the agent's
// reconstruction (spec arc.md "Compatibility facts"); it is for a tool that
// plays as the agent with the local server's map, such as arc demo. It
// fails with ErrNotStarted, or on HTTP and I/O errors.
func (c *Client) WriteFullFrame(ctx context.Context) (string, error) {
	st, err := c.ReadState()
	if err != nil {
		return "", err
	}
	a, err := c.newAPI(st.BaseURL, st)
	if err != nil {
		return "", err
	}
	g, level, ok, err := a.FullFrame(ctx, st.GUID)
	if err != nil || !ok {
		return "", err
	}
	dir := filepath.Join(c.ws, session.InitialFullFramesDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("client: %w", err)
	}
	path := filepath.Join(dir, session.InitialFullFrameFile(level))
	if err := g.WriteASCIIFile(path); err != nil {
		return "", fmt.Errorf("client: %w", err)
	}
	return path, nil
}
