// Package agent is evident's controller for an external coding agent playing
// one ARC-AGI-3 game in an evident workspace (issue 11; spec arc.md "The
// agent loop", "The controller, exactly"; baseline1 secure_baseline1
// agent.py, agent_runner.py, codex_runner.py, session_inspector.py): a state
// machine with no model of its own that chooses each prompt from an
// inspection of the workspace's client/session (Inspect, Controller.Choose),
// snapshots the workspace with git every iteration (Git) and writes every
// prompt, agent event, turn, inspection, refusal, snapshot, RESET and stop
// to WORKSPACE/agent/transcript.jsonl (Entry; the screen's ARC view reads
// it).
//
// Each iteration: stop when there is no level folder, the level holds 1,500
// steps, no step came since the last stuck prompt, or the game is solved;
// else snapshot, then GAME_OVER → death prompt, simplification turns, the
// controller's RESET, then trouble2 in a fresh agent session (> 200 steps
// since the level's big-trouble mark), trouble1 (> 100 since its trouble
// mark) or the normal reset prompt; a new level (above 1) → new-level prompt
// then the normal continuation; no new step → simplification and the stuck
// prompt; else simplification (1 turn on level 1, 7 from level 2) and the
// continuation. An agent turn that fails (non-zero exit, or stopped by the
// 30-minute idle watchdog, Runner) is recovered as baseline1's supervisor
// does: unless solved, out of levels or at 1,500 steps, and if the agent
// made a step, RESET when GAME_OVER and main + recovery prompt in a fresh
// session, at most 10 times.
//
// RunGame and RunGames wire it to an evident workspace and the game client
// (agent/policy.json, package policy, holds the client's guard rails while a
// run is on); ReadResult and WriteResultsTable give the results.
//
// # Decisions where the spec is silent
//
//   - Iterations are numbered across recoveries (baseline1's recovery
//     process starts again at 1 and re-tags with tag -f); the recovery
//     clears the other memory as a new baseline1 process does (trouble
//     marks, stuck step, previous level).
//   - The stop "no progress after the stuck prompt" leads to a recovery
//     (baseline1's supervisor checks only no level, 1,500 steps and solved
//     before recovering); once the recoveries are spent it stops the run.
//   - The main prompt is the workspace's main_prompt.md (evident arc init
//     states the seed's rules there for the workspace's model kind); the
//     other prompts are evident's own wording (prompts/), --prompts DIR
//     overrides them by file name and an unknown file name is an error.
//   - The agent's stderr lines go to the transcript as agent_event
//     {"stream":"stderr","text":…}; stdout lines as themselves when JSON.
//   - The idle watchdog watches the agent's own output (baseline1 watches
//     agent.log's mtime, which the agent's output and the controller's log
//     touch).
//   - The demo and the end-to-end test lower Thresholds.Trouble1 to 20
//     (DemoThresholds): on the built-in Trek one death cannot take 100
//     steps; the default thresholds are tested on their own.
package agent
