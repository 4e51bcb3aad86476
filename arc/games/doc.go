// Package games owns the local ARC-AGI-3 game server: three original games
// (Trek, Lights, Vista), each with three levels and a human baseline action
// count per level, an http.Handler (Server) that speaks the same REST API as
// the real server (spec arc.md "The real game: ARC-AGI-3 REST API"), and a
// reference Starlark world model of every game (WriteModel) that verifies
// against sessions recorded from it.
//
// It must not record sessions, read the workspace or talk to other servers:
// evident/arc/client plays these games over HTTP exactly as it plays the
// real ones and records what it sees. Wire types are evident/arc/api's.
//
// # Games
//
//   - trek-v1 (Trek): movement with a move budget; GAME_OVER when the
//     budget runs out; fuel refills it. Actions 1–4.
//   - lights-v1 (Lights): click puzzle; ACTION6 x y flips a lamp and its
//     neighbours; match the target pattern. Action 6 only.
//   - vista-v1 (Vista): sliding on ice in a world larger than the 64×64
//     view, seen through a camera that follows the player; every response
//     animates the slide, one frame per tile. Actions 1–4. Its levels need
//     load_initial_full_frame.
//
// The exact rules, colours and geometry are documented on Trek, Lights and
// Vista (people may read them; an agent under test should not).
//
// # Decisions where the spec is silent
//
//   - Determinism: levels are a pure function of (Config.Seed, level). Seed
//     0 plays the levels as drawn in the source; any other seed applies one
//     of the eight symmetries of the square to each level, chosen by a hash
//     of (game, level, seed). Symmetries keep every optimum, so the
//     baselines hold for all seeds. The dynamics have no randomness at all:
//     the same commands give the same responses, guid and card ids
//     included (they count requests).
//   - RESET (spec "POST /api/cmd/RESET"): without guid a new play at level
//     1; with guid, the current level restarts when an action was taken in
//     it, otherwise (or after a win) the whole game restarts at level 1
//     with levels_completed 0.
//   - Completing a level answers the frames of the move followed by the
//     next level's first frame; the last level answers state WIN and no
//     further frame.
//   - A non-RESET command in GAME_OVER is 400 with error GAME_OVER; after a
//     win 400 GAME_WON; an action outside available_actions 400
//     ACTION_NOT_AVAILABLE. Rejected commands do not count as actions.
//   - available_actions is the game's fixed list in every response.
//   - The official API (spec arc.md "Compatibility facts"; arcprize/ARC-AGI
//     arc_agi api.py and server.py): GET /api/games lists every game as an
//     api.EnvironmentInfo, baseline_actions included (the toolkit's own
//     server leaves them out; these baselines are public, the toolkit reads
//     the field, and `evident arc score --baseline` takes the answer);
//     GET /api/games/{id} matches the id or, like the toolkit's server, the
//     first served game whose id starts with id + "-" ("trek" finds
//     "trek-v1"; "tr" finds nothing; the built-in ids differ before their
//     dash, so the first-match rule never has to choose); GET
//     /api/healthcheck answers "okay"; GET /api/games/anonkey answers
//     AnonymousAPIKey. Both work without an API key.
//   - Every FrameResponse carries full_reset: true for a RESET that started
//     the game afresh (without guid, or with one when no action was taken
//     in the level or the game was won), else false. (The toolkit's own
//     listen_and_serve always sends false; the meaning here is the field's.)
//   - action_input.reasoning is echoed as sent, a JSON string (as the
//     toolkit sends it, json.dumps'ed) or any other JSON value, up to
//     MaxReasoningBytes as compact JSON.
//   - Errors as the official server answers them: a command naming an
//     unknown game, guid or scorecard, or a guid of a closed scorecard, is
//     400 {"error":"SERVER_ERROR","message":"game {game_id} not found"};
//     GET of an unknown or closed scorecard 404 SERVER_ERROR "card_id `{id}`
//     not found"; close of one 404 VALIDATION_ERROR "scorecard {id} not
//     found"; a missing game_id, guid or card_id 400 VALIDATION_ERROR.
//   - Scorecards are the official EnvironmentScorecard, scored by package
//     evident/arc/score from the same responses the client sees (a full
//     RESET starts a new run and is no action; a level RESET is an action
//     and a reset; an environment's score is its best run's). GET
//     /api/scorecard/{card_id}/{game_id} answers the older agents' shape
//     (api.LegacyScorecard, as arc_agi get_json_for does); the close answer
//     adds their "cards" (api.ClosedScorecard). A game of a scorecard is
//     scored when it has a run; its tags feed tags_scores.
//   - A scorecard closes when asked, after Config.ScorecardIdle without a
//     command (15 min) or Config.ScorecardMaxOpen after it opened (3 days),
//     judged on Config.Now at every request. Closing forgets the scorecard
//     and its plays, as the toolkit's server does, so later commands get
//     the "game … not found" answer and GET/close get 404.
//   - Bounds (issue 15; the official server bounds them by its rate limit
//     and expiry only): at most Config.MaxScorecards open scorecards
//     (DefaultMaxScorecards, 256; opening one more closes the one idle
//     longest), Config.MaxPlays plays per scorecard (DefaultMaxPlays, 64; a
//     RESET without guid beyond it forgets the scorecard's play idle
//     longest, its guid then "not found") and Config.MaxRuns runs per game
//     of a scorecard (DefaultMaxRuns, 256; beyond it the oldest run that is
//     neither the best nor a live play's current one is forgotten, so the
//     environment's score stays its best run's, while its sums of actions
//     and resets then cover the kept runs only). The rate limiter forgets
//     keys idle for a minute once it tracks 1,024. Stats counts what is
//     held (Scorecards, Plays, Runs).
//   - Not done: scorecards are not tied to the API key that opened them,
//     and competition mode is not served.
//   - Rate limit: Config.RateLimit requests per minute per API key over a
//     sliding window; beyond it 429 RATE_LIMIT_EXCEEDED with Retry-After in
//     whole seconds.
//   - The local extension api.PathFullFrame serves the current level's
//     initial full frame (only for the level a play has reached, so an agent
//     cannot see later levels early); 404 when the level fits the view.
package games
