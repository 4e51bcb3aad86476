// Package session owns the on-disk session recording of an ARC-AGI-3 game:
// the client/session/level_LL_attempt_AA/ tree that is the verifier's only
// data source (spec arc.md "Session recording"; seed 003 session_tools.py).
// It reads the tree into levels, attempts and steps ([Read], [ReadAttempt]),
// parses and writes step metadata ([ParseMetadata], [Metadata.MarshalJSON]),
// derives each step's observed status ([ObservedStatus]) and records new
// responses in the same layout ([Recorder]).
//
// It must not know about world models, planning, verification or the game
// API: it does not replay, compare or talk to a server. Frames are
// evident/arc/frame grids; this package never renders or compares them
// itself.
//
// # Layout (spec "Session recording")
//
//	client/session/level_{LL:02d}_attempt_{AA:02d}/
//	    initial_metadata.json  initial_frame.txt  initial_frame.png
//	    step_{kkkk:04d}_metadata.json  step_{kkkk:04d}_final.txt  step_{kkkk:04d}_final.png
//	    step_{kkkk:04d}_intermediate_{ii:02d}.txt  step_{kkkk:04d}_intermediate_{ii:02d}.png
//
// Levels, attempts and steps count from 1. The writer pads as shown; readers
// accept any number of digits (level_2_attempt_1, step_7_final.txt) and sort
// numerically. Two names for the same slot (step_1_final.txt and
// step_0001_final.txt) are an error, not a silent pick.
//
// # Decisions where the spec and seed are silent
//
//   - Intermediate frames are numbered from 01 in arrival order; the final
//     frame is the last frame of the response and is not also written as an
//     intermediate. Readers accept any intermediate numbers and sort them.
//   - A RESET response's initial_frame is its last frame; earlier frames of a
//     multi-frame RESET response are not recorded (the layout has no slot).
//   - PNG files are derived and optional for readers: a missing PNG gives an
//     empty path, never an error. The .txt files are the data.
//   - "Missing trailing files after GAME_OVER": a step whose observed status is
//     GAME_OVER may lack its final and intermediate frames (the server may
//     send no frame with GAME_OVER, and frames are compared only on RUNNING
//     steps). Every other step must have its metadata and final .txt. Steps
//     must be numbered 1..n without gaps, and nothing may follow a
//     GAME_OVER or LEVEL_COMPLETED step in the same attempt folder.
//   - Attempt and level numbers may have gaps (attempt folders are replayed
//     independently); entries that do not match the layout are ignored
//     (notes, editor backups, the recorder's dot-prefixed temporary files).
//   - Metadata must be a JSON object with a non-empty "state" string and an
//     integer "levels_completed" ≥ 0; every other spec field defaults to zero
//     when absent. Unknown keys are kept in Metadata.Extra and written back.
//     Duplicate keys are an error. action_input.id may be an integer
//     (0 RESET, 1..7 ACTION1..ACTION7, the API's GameAction numbering) or a
//     name string in any case; the form it was written in is kept for the
//     round trip, the name is normalised to upper case.
//   - Action decoding (a step's Action) is stricter than metadata parsing:
//     an unknown id, or ACTION6 without integer data.x and data.y in 0..63,
//     is an error naming the file.
//   - The Recorder writes every file through a temporary file and a rename,
//     frames before metadata, so a reader never sees half a file and a step
//     becomes visible when its metadata appears. On LEVEL_COMPLETED it also
//     writes the response as initial_* of level L+1 attempt 01 (the next free
//     attempt number if that folder exists), except when the game is won
//     (state WIN, or levels_completed ≥ win_levels > 0): there is no level
//     L+1 then.
//   - Resuming (OpenRecorder on an existing tree) continues the attempt whose
//     latest record has the highest step_index (ties: higher level, then
//     higher attempt), because after a whole-game RESET the newest attempt is
//     not the highest-numbered level.
//
// Errors name the file and, for syntax and type errors, the 1-based line and
// column of the offending value, e.g.
//
//	/ws/client/session/level_02_attempt_01/step_0003_metadata.json:2:23: session: levels_completed: want an integer ≥ 0, got "\"one\""
package session
