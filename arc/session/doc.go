// Package session owns the on-disk session recording of an ARC-AGI-3 game:
// the client/session/level_LL_attempt_AA/ tree that is the verifier's only
// data source (spec arc.md "Session recording"; seed 003 session_tools.py).
// It reads the tree into levels, attempts and steps ([Read], [ReadAttempt]),
// parses and writes step metadata ([ParseMetadata], [Metadata.MarshalJSON]),
// derives each step's observed status ([ObservedStatus]) and records new
// responses in the same layout, as baseline1's client writes it
// ([Recorder]).
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
// Levels, attempts and steps count from 1. The writer writes what
// baseline1's client writes, byte for byte for text files and pixel for
// pixel for PNGs (spec arc.md "Compatibility facts"; checked by the golden
// recording in evident/arc/client testdata/baseline1, made with baseline1's
// own client.py):
//
//   - metadata as [Metadata.MarshalFile]: the action name as
//     action_input.id, keys sorted, Python's json.dumps(indent=2), no final
//     newline; step_index is whatever the caller puts in Metadata (the
//     client counts it as baseline1's server does);
//   - intermediates named by their 0-based index in the response
//     (step_0001_intermediate_00 is the response's first frame; the last
//     frame is _final and is not also written as an intermediate);
//   - frames as uppercase hex ASCII and 8× RGB PNGs (colour type 2).
//
// # Reading rules (baseline1's readers, plus evident's older recordings)
//
//   - Attempt folders match level_{L}_attempt_{A} with any number of digits
//     (baseline1: ^level_(\d+)_attempt_(\d+)$); L and A must be ≥ 1, other
//     entries are ignored. Two folders for the same (L, A) are an error.
//   - Step files have exactly four digits (baseline1 matches
//     ^step_(\d{4})_metadata\.json$ and builds the other names with {:04d}).
//     Where the spec says readers accept unpadded numbers, this is the
//     reconciliation: unpadded attempt folders are read, but a step file
//     with another number of digits (step_7_final.txt) is an error naming
//     the file: baseline1 would silently skip it, and reading it would make
//     evident verify a different session than baseline1 does.
//   - Intermediates may be numbered from 00 (baseline1, and this writer) or
//     01 (evident before this format), with any number of digits; they are
//     sorted numerically. Two names for one slot (_1 and _01) are an error.
//   - action_input.id may be a name string in any case (baseline1) or an
//     integer 0..7 (evident's older recordings, the API's numbering).
//   - Old paletted PNGs and RGB PNGs are both fine: readers never decode
//     PNGs; the .txt files are the data and a missing PNG gives "".
//   - Frames in initial_frame.txt, step finals and intermediates must be
//     64×64: another size is an error naming the file and its size (not a
//     later "rendered frame mismatch"). initial_full_frames/level_N.txt
//     ([ReadInitialFullFrame]) may be larger.
//   - Steps must be numbered 1..n without gaps (baseline1's controller
//     reads step_{n}, n = the number of step files, as the latest), each
//     with its metadata. A step lacking its final .txt is accepted when it
//     is itself GAME_OVER (evident's recorder writes a GAME_OVER response
//     without frames that way) and skipped, as baseline1 skips it, when it
//     directly follows a GAME_OVER step ([Attempt.Skipped]); any other step
//     without its final frame is an error naming the missing file. Steps
//     after a GAME_OVER or LEVEL_COMPLETED step are read, as baseline1 reads
//     them (neither client writes them).
//   - Step 0 (step_0000_*), which baseline1's regular expression would
//     accept but no client writes, is an error.
//
// # Decisions where the spec and seed are silent
//
//   - A RESET response's initial_frame is its last frame; earlier frames of a
//     multi-frame RESET response are not recorded (the layout has no slot;
//     baseline1's client does the same).
//   - Frames from a server response must be 64×64: another size is an error
//     naming the server response, the frame and its size, and nothing of
//     the response is written. A cell outside 0..15 (the API decoder stores
//     it as frame.Invalid) does not lose the step: it is written as 5, the
//     black of the palette, in the .txt and the PNG alike, and the recorder
//     returns one warning per response ([Recorded.Warning],
//     [OutOfPaletteWarning]). A hex digit keeps the file readable by every
//     reader (baseline1's client would write "10" for 16 and break the row
//     width), and the .txt then agrees with the PNG the agent looks at, so
//     a model that renders what it sees verifies.
//   - Metadata must be a JSON object with a non-empty "state" string and an
//     integer "levels_completed" ≥ 0; every other spec field defaults to zero
//     when absent. Unknown keys are kept in Metadata.Extra; the recorder
//     writes them back except the keys baseline1's client drops
//     ([Baseline1DroppedKeys], action_input.reasoning). Duplicate keys are an
//     error.
//   - Action decoding (a step's Action) is stricter than metadata parsing:
//     an unknown id, or ACTION6 without integer data.x and data.y in 0..63,
//     is an error naming the file.
//   - The Recorder writes every file through a temporary file and a rename,
//     frames before metadata (baseline1 writes metadata first; the files are
//     the same), so a reader never sees half a file and a step becomes
//     visible when its metadata appears. On LEVEL_COMPLETED it also writes
//     the response as initial_* of level L+1 attempt 01 (the next free
//     attempt number if that folder exists), except when the game is won
//     (state WIN, or levels_completed ≥ win_levels > 0): there is no level
//     L+1 then.
//   - Resuming (OpenRecorder on an existing tree) continues the attempt whose
//     latest record has the highest step_index (ties: higher level, then
//     higher attempt), because after a whole-game RESET the newest attempt is
//     not the highest-numbered level.
//
// Errors name the file and, for syntax and type errors, the 1-based line and
// column (in runes) of the offending value, e.g.
//
//	/ws/client/session/level_02_attempt_01/step_0003_metadata.json:2:23: session: levels_completed: want an integer ≥ 0, got "\"one\""
//
// They are *[ParseError] values, the module's one located error
// (evident/internal/located.Error, also frame.ParseError); in-memory input
// (ParseMetadata) has no file and reads "line 2, column 23: session: …".
package session
