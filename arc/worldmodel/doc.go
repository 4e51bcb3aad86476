// Package worldmodel owns the executable world model of an ARC-AGI-3 game
// (spec arc.md "Vocabulary and contracts"; seed 003): the Model interface
// the verifier and the planner commands call, the default Starlark runtime
// (LoadStarlark) that runs the agent's three files in a sandbox, the sandbox's
// built-ins (a Go-backed grid, status constants, load_initial_full_frame, a
// bounded breadth-first search) and state hashing (State.Key, ValueKey).
//
// It must not read the session, compare frames with recordings, print
// reports or talk to the game: package evident/arc/verify replays the
// session through a Model and decides what is a mismatch. Frames are
// evident/arc/frame grids and actions evident/arc/session actions.
//
// # The model: three files
//
// In the agent's workspace (StarlarkOptions.Dir):
//
//	world_model_engine.star         world_model_engine(state, action) -> (state, status)
//	world_model_state_io.star       initial_state_reconstruction(level_index, initial_frame) -> state
//	                                state_renderer(state) -> 64×64 grid
//	                                apply_render_overrides(frame, state, level_index, attempt_index, step_count) -> grid   (optional)
//	world_model_main_planner.star   planner(state, goal=None) -> list of actions | None   (needed by the planner commands only)
//
// A state is a dict with an int "level" ≥ 1; an action is the dict
// {"name": "ACTION1".."ACTION7"} with int "x", "y" (0..63) for ACTION6;
// a status is RUNNING, LEVEL_COMPLETED or GAME_OVER. A plan is a list of
// action dicts or bare names ("ACTION1"); RESET in a plan is an error.
// Renderers return a grid (or a list of 64 rows of 64 ints 0..15); anything
// that is not 64×64 colours 0..15 is a contract error (ErrContract) rather
// than a frame mismatch, so the agent is told what is wrong.
//
// # Sandbox (decisions)
//
// The seed's rule "the only file initial_state_reconstruction may read is the
// level's full initial frame" is enforced by construction, not by prompt:
//
//   - The predeclared names are Starlark's universe (no open, no time, no
//     random, no os; print goes to StarlarkOptions.Print) plus RUNNING,
//     LEVEL_COMPLETED, GAME_OVER, grid, grid_from_rows,
//     load_initial_full_frame and bfs. Nothing else touches files, clocks or
//     randomness, so a model is a deterministic function of its arguments.
//   - load() accepts exactly the three file names above (each executed once;
//     cycles are errors). Any other module, path or library is refused with
//     `load of "os" refused: a world model may load only …`.
//   - load_initial_full_frame(level_index) reads
//     <workspace>/initial_full_frames/level_N.txt (no zero padding, any size
//     up to 4096×4096) and returns a frozen grid, or None when the file does
//     not exist. It works only while initial_state_reconstruction runs: any
//     later state must be "initial state + replay of actions", never loaded.
//   - Module globals are frozen after a file's top-level code runs, and
//     every state returned by initial_state_reconstruction or
//     world_model_engine is frozen (deeply, grids included), as is the
//     initial frame passed in. A model therefore cannot keep hidden memory
//     between calls, nor mutate a state the verifier or a search still
//     holds: the engine must build a new state (dict(state), grid.copy()).
//     Mutating a frozen value fails with Starlark's "frozen" error.
//   - Dialect: while loops, top-level if/for, set() and global
//     reassignment are on (ports of Python models need them); recursion
//     stays off, because deep recursion would exhaust the Go stack before
//     any step limit stopped it.
//   - Every call from Go into the model (each of the five functions, and
//     each file's top-level code) gets a fresh step budget:
//     StarlarkOptions.CallSteps (default DefaultCallSteps, under a second),
//     or PlanSteps for the planner, whose searches spend the same budget.
//     Exceeding it fails the call with ErrStepLimit. Independently, every
//     call is cancelled (Thread.Cancel) when its context is done, so the
//     caller's whole-run time limit (verify's 180 s) stops even a model stuck
//     in one call; the error then wraps context.DeadlineExceeded.
//
// # Built-ins
//
// grid(width, height, color=0) makes a mutable grid of colours 0..15;
// grid_from_rows(rows) makes one from hex strings ("0F3…") or lists of ints.
// A grid has width and height and the methods get(x, y, default?) (outside
// the grid: default, or an error without one), set(x, y, color), fill(color),
// fill_rect(x, y, width, height, color) (clipped), copy(), crop(x, y, width,
// height) (must lie inside), paste(src, x, y, transparent=-1) (clipped; cells
// of src equal to transparent are skipped), find(color) → [(x, y), …]
// row-major, count(color), bbox(color) → (x, y, width, height) or None,
// diff(other) → mismatching cells as frame.Mismatches counts them, and
// row(y) → list of ints. x is the column and y the row, origin top-left, as
// in ACTION6. == compares size and cells; frozen grids are hashable. Setting
// a colour outside 0..15 is an error.
//
// bfs(start, actions, is_goal=None, key=None, max_nodes=100000) searches the
// engine breadth-first from start and returns a shortest plan (a list of
// action dicts; [] when is_goal(start, RUNNING) holds) or None when there is
// none within max_nodes distinct states (at most MaxNodesLimit). actions is
// a list of actions, or a function state → list (e.g. clicks that depend on
// the state). Without is_goal the goal is status LEVEL_COMPLETED; otherwise
// is_goal(state, status) decides. Only RUNNING states are expanded. States
// are deduplicated by the 128-bit ValueKey of key(state), default the whole
// state (dict order does not matter). Engine calls spend the planner's step
// budget and the search stops when the run's context is done. BFS is the
// same search from Go over any Model.
//
// # Runtimes
//
// Model is the seam between the harness and a runtime. The Starlark runtime
// keeps states as frozen Starlark dicts inside the process. A subprocess
// runtime (a model in any language started by --model-cmd) is not written
// yet; it will fit Model through this JSON-lines protocol on the child's
// stdin/stdout, one request and one response per line, strictly in turn:
//
//	→ {"id":1,"op":"hello","protocol":1}                            ← {"id":1,"ok":true}
//	→ {"id":2,"op":"reconstruct","level":2,"frame":["00A…",…]}      ← {"id":2,"state":7,"level":2,"key":"<32 hex>"}
//	→ {"id":3,"op":"step","state":7,"action":{"name":"ACTION6","x":15,"y":47}}
//	                                                                ← {"id":3,"state":8,"level":2,"key":"…","status":"RUNNING"}
//	→ {"id":4,"op":"render","state":8}                              ← {"id":4,"frame":["…",…]}
//	→ {"id":5,"op":"override","state":8,"frame":[…],"level":2,"attempt":1,"step":3}   ← {"id":5,"frame":[…]}
//	→ {"id":6,"op":"plan","state":8,"goal":null}                    ← {"id":6,"plan":[{"name":"ACTION1"},…]}  (or "plan":null)
//	→ {"id":7,"op":"release","states":[7]}                          ← {"id":7,"ok":true}
//	any failure                                                     ← {"id":n,"error":"message","traceback":"…"}
//
// States stay in the child, named by integer handles, so large states never
// cross the pipe; the child computes each state's key (a hash of its
// canonical JSON) so searches in Go can deduplicate. Frames are rows of hex
// digits as in the session's ASCII files. The harness enforces the time
// limit by killing the child, and the sandbox (no file access but the full
// initial frames, no clock, no randomness) by running it without network
// and with a read-only view of initial_full_frames only.
package worldmodel
