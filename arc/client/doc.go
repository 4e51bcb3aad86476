// Package client owns the game client of an agent workspace: the REST client
// of the ARC-AGI-3 API (API) and the client that plays one game through it
// and records every response in the session layout (Client), for the real
// server and for the local one of evident/arc/games alike (spec arc.md "The
// real game: ARC-AGI-3 REST API", "Session recording").
//
// It must not judge, replay or plan: it never loads a world model and never
// compares frames (evident/arc/verify and the plan executor do). It writes
// only under the workspace: client/session/ (through session.Recorder),
// client/client_state.json and client/client.lock (and, when a new game
// starts after an expired one, client/session.expired-N/ and
// client/client_state.expired-N.json). It never writes
// initial_full_frames/: that is the agent's reconstruction of a partly
// visible level (spec arc.md "Compatibility facts"); the local server's
// full map stays available through its own endpoint (API.FullFrame).
//
// # Commands
//
// Start opens a scorecard, sends RESET without guid and records
// level_01_attempt_01. Move sends one command: RESET (with the guid: the
// server resets the level, or the whole game when no action was taken in
// the level) opens a new attempt folder; any other action is the next step
// of the current attempt, and the step that completes a level is also
// recorded as the next level's initial_* (session.Recorder). Stop closes
// the scorecard. Status and LastStep read the state and the session and
// send nothing.
//
// WriteSummary prints a Result as baseline1's client prints every command
// (print_step_summary: step, state, level, action, available_actions_next,
// then the files written, grouped by folder); the command line prints it
// after start and move, and after StatusHeader for status.
//
// # Decisions where the spec is silent
//
//   - One process per command (the agent calls the command line), so state
//     lives on disk: StateFile holds base URL, game, card, guid, the
//     step_index counter, the latest state and available actions, and the
//     cookies (name and value, restored for every path). The API key is
//     never stored; it comes from ARC_API_KEY each time.
//   - step_index is counted as baseline1's server counts it (spec arc.md
//     "Compatibility facts"): 0 for the response to the opening RESET, +1
//     for every command after it, RESETs included.
//   - Locking: every start, move and stop holds an exclusive flock on
//     LockFile (an O_EXCL file where flock does not exist) for its whole
//     duration; a second command waits up to Options.LockWait, then fails
//     with ErrBusy. The plan executor holds the lock for a whole plan.
//   - Commands the server is sure to refuse are not sent (they would still
//     count against the rate limit): actions in GAME_OVER (ErrGameOver) or
//     after a win (ErrGameWon), and actions outside the last
//     available_actions (ErrNotAvailable). The server's own 400 saying the
//     game is over, in any wording (GAME_OVER, "game over", "game is over",
//     case-insensitive, punctuation ignored), matches ErrGameOver too.
//   - baseline1 v1.6's rules (client.py validate_action_for_state,
//     move_command), refused with its messages (RuleError): a non-RESET in
//     GAME_OVER; a RESET before the current attempt's first action (also
//     right after a completed level, where the official server would reset
//     the whole game to level 1) unless MoveOptions.Force; any command once
//     the level holds MaxLevelActions (1,500) actions, counted from
//     step_index as baseline1 does (LevelActions).
//   - Scorecard expiry (the official server closes a scorecard after 15 min
//     without a command): State.LastCommand, on Options.Now, is when the
//     server last answered a RESET or action. A move more than
//     ScorecardIdleLimit after it is refused without being sent; a 400 or
//     404 "not found" (or SCORECARD_CLOSED) to a command is the server
//     saying the same. Both are an ExpiredError with the idle gap and mark
//     the state expired for good. The warning threshold, IdleWarnAfter, is
//     10 min: a move or status past it warns with the time left, the last
//     5 min being enough for an agent to act. GET scorecard does not count
//     as a command (the official server's idle clock is its commands').
//   - After an expired game, Start in the same workspace moves its session
//     to client/session.expired-N/ and its state file to
//     client/client_state.expired-N.json (N from 1, the first free) and
//     starts anew: nothing is deleted, and baseline1's controller, which
//     reads only client/session, sees the new game from level 1. A stopped
//     game that did not expire keeps the rule below.
//   - Closing answered 404 (the server closed the scorecard itself) is a
//     warning to Options.Warn; the game is marked stopped.
//   - Game ids as the official server takes them (arc_agi api.py
//     get_game_info): the whole id, or the id before its "-version" when
//     that names one game of GET /api/games (ResolveGameID); other prefixes
//     are refused with the candidates named. The state keeps the whole id.
//   - HTTP timeout: DefaultTimeout is baseline1's client's 30 s, not the
//     official toolkit's 10 s: an answer may carry many animation frames,
//     and a command that timed out may still have been played.
//   - Retries: only 429 is retried (Retry-After honoured, else 1 s doubling
//     to 1 min, DefaultMaxRetries times). A network error or 5xx is returned
//     as is: the action may have been played, and a blind retry could play
//     it twice.
//   - An empty session is required to start (except after an expired game,
//     above): one workspace, one game.
//   - A key is required unless the server is on a loopback address (the
//     local server accepts any key by default).
//   - If the server answered but recording failed, the error says that the
//     session now lags the game; the state file is already updated.
package client
