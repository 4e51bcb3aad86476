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
//   - Scorecards: every command of a play counts as an action of the level
//     the play was on when it arrived (RESETs included); the level and game
//     scores are Score's RHAE. A scorecard closes when asked or after
//     Config.ScorecardIdle without a command; RESET and actions on a closed
//     scorecard are 400 SCORECARD_CLOSED.
//   - Rate limit: Config.RateLimit requests per minute per API key over a
//     sliding window; beyond it 429 RATE_LIMIT_EXCEEDED with Retry-After in
//     whole seconds.
//   - The local extension api.PathFullFrame serves the current level's
//     initial full frame (only for the level a play has reached, so an agent
//     cannot see later levels early); 404 when the level fits the view.
package games
