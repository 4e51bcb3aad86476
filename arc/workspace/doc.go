// Package workspace writes a baseline1-shaped agent workspace for evident
// (issue 10 item 3; spec arc.md "Compatibility facts": the agent-facing
// commands of a baseline1 workspace) and holds the two workspace tools that
// baseline1 ships as scripts and evident had not: full-frame plots and
// ASCII→PNG.
//
// Init writes, from templates embedded in the binary:
//
//	evident_workspace.json          Config: the evident binary, the server URL, the model kind
//	evident_launch.py               the launchers' shared helper (Python 3 stdlib only)
//	main_prompt.md                  the agent's main prompt, stating the seed's rules
//	verify_world_model.py           → evident arc verify
//	verify_main_planner.py          → evident arc planner verify
//	run_main_planner.py             → evident arc planner run
//	run_aux_planner.py              → evident arc planner aux
//	plan_executor.py                → evident arc plan-exec
//	plot_initial_full_frames.py     → evident arc plot-initial-full-frames
//	client/README.md
//	client/client.py                → evident arc client (start|move|status, baseline1's argument forms)
//	client/ascii_to_png.py          → evident arc ascii-to-png
//	world_model_engine.star, world_model_state_io.star, world_model_main_planner.star
//	    (or, Options.Python, the seed's world_model_engine.py, world_model_state_io.py,
//	    world_model_main_planner.py stubs; the launchers then pass --model-cmd python,
//	    and baseline1's helpers for the agent's own Python, PythonHelpers:
//	    session_tools.py, state_reconstruction_tools.py, frame_plot_lib.py,
//	    game_status.py, load_initial_full_frame.py)
//	initial_full_frames/            empty: the agent's reconstruction of partly visible levels
//
// The launchers are thin: each execs `$EVIDENT_BIN` (else Config.EvidentBin)
// with `arc <command> --workspace <root>` and $EVIDENT_SCRIPT_NAME set to the
// script's name; the Go side (cmd/evident arc_script.go) then prints what
// baseline1's script of that name prints: the script-name prefix on the lines
// baseline1 prefixes, errors on stdout, baseline1's exit statuses.
//
// It must not play games, run model code or verify (the arc commands the
// launchers call do).
//
// # Decisions where the spec is silent
//
//   - Init never overwrites: if any file it would write exists, it fails
//     naming it and writes nothing. The folder itself may exist (a fresh
//     git checkout, say).
//   - The server URL is fixed at init (baseline1 reads $GAME_SERVER_URL at
//     every call; evident's client keeps the URL of its start). The default
//     is the local game server's default address, DefaultServerURL.
//   - The model stubs are evident's own, shaped as seed 003 describes
//     baseline1's: a placeholder engine (state unchanged, RUNNING), a
//     reconstruction that keeps the level only, an all-zero renderer, an
//     identity apply_render_overrides and a planner that returns None.
//   - Python stubs import game_status and numpy as the seed's do. Model
//     code gets evident's adapter's own game_status, load_initial_full_frame
//     and state_reconstruction_tools (sandboxed); the workspace's copies
//     (PythonHelpers) are for the agent's own Python, unsandboxed, as
//     baseline1's are. They read client/session/ as baseline1's do, also
//     evident's older recordings (int action ids), and write PNGs with zlib
//     (numpy is their only dependency). A frame file with a character that
//     is not a hex digit (a byte-order mark included) is a ValueError naming
//     file, line and column.
//   - PlotInitialFullFrames visits initial_full_frames/level_*.txt in byte
//     order of the names, as baseline1's sorted(glob) does (level_10 before
//     level_2); a name whose N is not a number is an error naming the file
//     (baseline1 stops with a ValueError); a padded N (level_02.txt) is
//     skipped (baseline1 would plot level_2.txt's frame under its name).
package workspace
