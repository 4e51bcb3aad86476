// Package score computes RHAE, the ARC-AGI-3 scorecard's score, exactly as
// the official toolkit computes it (arc_agi 0.9.8, arcprize/ARC-AGI
// arc_agi/scorecard.py; spec arc.md "Scoring (RHAE)" and "Compatibility
// facts"): the bookkeeping of a scorecard's runs from the stream of command
// responses ([Card.Update], scorecard.py Scorecard.update_scorecard and
// Card), the score of one run ([ScoreRun], EnvironmentScorecard._calculate_score
// and EnvironmentScoreCalculator), of an environment ([Environment],
// EnvironmentScoreList) and of tags ([Calculator], tags_scores).
//
// It is pure: no I/O, no clock, no HTTP. The local game server
// (evident/arc/games) keeps its scorecards with it, and `evident arc score`
// replays a recorded session through the same [Card], so both give the same
// numbers for the same play.
//
// # The rules, with their source in scorecard.py
//
//   - A RESET that restarts the whole game (full_reset) starts a new run and
//     is not an action (Card.inc_play_count). A RESET that restarts the level
//     is one action and one reset of the current run (Card.inc_reset_count).
//     ACTION1..ACTION7 are one action each (Card.inc_action_count).
//   - A response with state GAME_OVER or WIN sets the run's state; no other
//     state is recorded, so a run stays GAME_OVER after a level RESET until
//     it is won (update_scorecard).
//   - When levels_completed changes, the run records the mark
//     (levels_completed, actions so far) (Card.set_levels_completed). Level
//     i's actions are the difference of consecutive marks; the first level
//     without a mark gets every action after the last mark, the levels after
//     it 0 (_calculate_score).
//   - Level score: completed with a > 0 actions: min((b/a)² · 100, 115);
//     otherwise 0 (EnvironmentScoreCalculator.add_level). A level is
//     completed when it has a mark.
//   - Run score: Σ i·s_i / Σ i over levels i = 1..n (all of the game's
//     levels), capped at 100 · Σ_{s_i > 0} i / Σ i (to_score).
//   - Environment: every run is scored; the environment's score is the best
//     run's, levels_completed the best, actions and resets the sums
//     (EnvironmentScoreList). The scorecard's score is the mean over its
//     environments (from_scorecard).
//   - Tags: only the run with the most levels completed (the first such)
//     adds its levels to each of the environment's tags (from_scorecard,
//     best_idx).
//   - More marks than baselines: score 0 with the message "Human baseline
//     actions size mismatch" and the raw per-level actions, baselines -1
//     (_raw_scores_from_card).
//
// # Decisions where the toolkit is silent
//
//   - A response for a guid that no run has is counted on the latest run,
//     as Card.index_of_guid does; an update before any run is ignored.
package score
