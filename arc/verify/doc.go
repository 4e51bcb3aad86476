// Package verify owns the harness's acceptance checks of a world model
// against the recorded session (spec arc.md "Verification"; seed 003
// verify_world_model.py, verify_main_planner.py, run_main_planner.py):
// Verify replays every recorded attempt through the model, VerifyPlanner
// checks the main planner on every completed level, RunPlanner prints a
// re-simulated plan from a recorded state, RunAuxPlanner runs an auxiliary
// planner module (run_aux_planner.py) and writes its simulated frames to
// aux_planner_frames/N/. Each writes its report, line by
// line, to Options.Out, with the seed's wording, and returns a *Failure for
// everything it reported as a failure (the command line exits 1 on any
// error).
//
// It must not run model code itself (evident/arc/worldmodel does, behind
// worldmodel.Model), parse session files (evident/arc/session) or draw
// frames (evident/arc/frame writes the mismatch artifacts); it never writes
// into the session. The replay of an attempt, the rendered frame with its
// override warning, the mismatch block and folder and the Failure type are
// shared with the plan executor through evident/arc/replay. It does not send actions to the game: the plan executor
// is another package's job.
//
// # Report lines (byte for byte)
//
// Verify, per level R = 1..M (M = the highest level folder, "Model level"):
//
//	level R verified
//	levels 1..M verification passed
//
// First mismatch (artifacts in <workspace>/mismatch_frames/<N>/, N = highest
// existing + 1; paths absolute):
//
//	verification failed for level R
//	Model level M, replay level R, attempt A, replay, step K: rendered frame mismatch.
//	real ascii: <session>/level_RR_attempt_AA/step_KKKK_final.txt
//	real png: <session>/level_RR_attempt_AA/step_KKKK_final.png
//	simulated ascii: <ws>/mismatch_frames/N/simulated_frame.txt (predicted frame as text)
//	simulated png: <ws>/mismatch_frames/N/simulated_frame.png (predicted frame rendered)
//	mismatch region png: <ws>/mismatch_frames/N/mismatch_region.png (localized mismatch neighborhoods)
//	mismatch as magneta png: <ws>/mismatch_frames/N/mismatch_as_magneta.png (full frame with magenta mismatch pixels)
//
// The initial frame: "…, attempt A, replay, initial state: rendered initial
// frame mismatch." with the initial_frame.txt/.png paths. A status mismatch
// writes no artifacts: "…, step K: predicted status P, observed O." and the
// real ascii line only. The override warning, once per level per run, when
// apply_render_overrides first changes a frame of that level:
//
//	warning: level L uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic
//
// Past the time limit (TimeLimit, 180 s for the whole run, model loading
// aside): "Your world model is too slow, please consider refactoring it." —
// for the planner commands "Planner too slow, please consider using a faster
// planner.". See VerifyPlanner and RunPlanner for their lines.
//
// # Decisions where the spec and seed are silent
//
//   - Output has no script-name prefix (the seed prints
//     "verify_world_model.py: …"); the spec's lines are quoted without one.
//   - As in the seed, "verification failed for level R" precedes mismatch
//     and planner-verification failures only. A model error (exception,
//     step limit, contract violation) is reported as "<where>: <function>:
//     <error>" followed by the Starlark traceback, where <where> is the
//     mismatch context ("Model level M, replay level R, attempt A, replay,
//     step K" or "…, initial state"); the seed lets the Python exception
//     escape instead. A timeout prints the message alone.
//   - A real PNG that is absent is printed as its expected path followed by
//     " (missing)"; likewise the real ascii of a GAME_OVER step that has no
//     final frame.
//   - A missing level below the model level is the seed's error "No level-R
//     attempts found in the latest session." (exit 1).
//   - The override warning uses the state's "level", as the seed does.
//   - RunPlanner refuses to plan from a state whose replay ends before the
//     requested step with GAME_OVER or LEVEL_COMPLETED (the seed would plan
//     from the terminal state). Like the seed, a plan is accepted once its
//     re-simulation reaches LEVEL_COMPLETED; actions after that are printed
//     but cannot matter.
//   - "Current attempt" is the attempt whose latest record has the highest
//     step_index, ties to the higher level then attempt — the rule
//     session.OpenRecorder resumes with.
//   - RunPlanner versus baseline1 run_main_planner.py: same lines and
//     checks (non-empty plan; re-simulation stops at the first non-RUNNING
//     status and must be LEVEL_COMPLETED); baseline1 raises the "planner
//     returned a plan …" AssertionError (a traceback on stderr), evident
//     prints it on stdout and exits 1; baseline1 plans from a terminal
//     replay state, evident refuses (above).
//   - RunAuxPlanner, like baseline1, accepts any non-empty plan: the
//     re-simulation decides only the "simulated plan reached level
//     completion" line and which frames exist (none for the terminal step);
//     the planner must check its own target (baseline1's prompt says so).
//     Its frames skip apply_render_overrides, as baseline1's do.
//   - The time limit starts when the session is read and covers every model
//     call; each call is also bounded by the model's per-call step limit.
package verify
