// Package worldmodel owns the executable world model of an ARC-AGI-3 game
// (spec arc.md "Vocabulary and contracts"; seed 003): the Model interface
// the verifier and the planner commands call, the default Starlark runtime
// (LoadStarlark) that runs the agent's three files in a sandbox, the sandbox's
// built-ins (a Go-backed grid, status constants, load_initial_full_frame, a
// bounded breadth-first search) and state hashing (State.Key, ValueKey), and
// the subprocess runtime (LoadSubprocess) that runs a model written in any
// language — with the embedded Python adapter, the seed's own
// world_model_*.py files unchanged.
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
//   - load() accepts the three file names above, other world_model_*.star
//     files of the workspace (helpers the agent splits its model into) and
//     auxiliary planners level_N_planner_i.star (each executed once; cycles
//     are errors). Any other module, path or library is refused with
//     `load of "os" refused: a world model may load only …`.
//   - Auxiliary planners (AuxPlanner; baseline1 run_aux_planner.py): the
//     planner function of <module>.star, any module name the agent gives.
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
//   - Memory (issue 15): while a call runs, a watchdog samples the heap
//     every 10 ms (runtime/metrics) and cancels the call when it has grown
//     more than StarlarkOptions.MemoryLimit (DefaultMemoryLimit, 1 GiB)
//     above its size at load: ErrMemoryLimit, "world_model_engine made the
//     heap grow by more than 1 GiB". go.starlark.net counts no
//     allocations, so the operations in flight when the limit is seen
//     finish first: measured on 2 cores, a loop of x = x + x on a list
//     reached 8 GiB resident with the 1 GiB default and 2.1 GiB with 256
//     MiB (a string: 4 GiB and 1 GiB) before the call stopped
//     (repetition is capped by go.starlark.net at 2^30 elements). A hole
//     this watch does not close; `evident arc … --model-memory MiB` lowers
//     it, and subprocess models under bubblewrap get the kernel's
//     RLIMIT_AS instead. str() and the other printers refuse values nested
//     deeper than MaxReprDepth (10,000) levels.
//   - Built-ins whose cost go.starlark.net does not count: str, repr,
//     print and fail are replaced by versions that write the same text
//     but charge one step per value (cycles found by a set, so a value
//     nested a million deep prints in linear time) and stop at any limit.
//     State keys visit at most 2^24 values. For the rest ("%s" % v,
//     "{}".format(v), hashing a tuple that shares itself) every call runs
//     on a goroutine of its own: a call cancelled by a limit that does not
//     stop within 5 s of it is abandoned — the caller gets the limit's
//     error wrapping ErrAbandoned and the model refuses further calls
//     (the stuck built-in runs on until it returns; the commands exit).
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
// (the default, and the only sandboxed one) keeps states as frozen Starlark
// dicts inside the process. The subprocess runtime (LoadSubprocess; the
// command line's --model-cmd) talks to a program in any language.
//
// # Subprocess runtime: the protocol
//
// SubprocessOptions.Command is run by "sh -c" in the workspace, in a process
// group of its own. It speaks JSON lines on stdin/stdout: Go writes one
// request line, the program writes exactly one response line, strictly in
// turn. Every line is one JSON object (UTF-8, no raw newline inside); every
// response carries its request's "id". Anything the program writes to stderr
// is copied to SubprocessOptions.Print as it comes, and its last lines are
// kept for error messages.
//
//	→ {"id":1,"op":"hello","protocol":1,"workspace":"/abs/ws","full_frames":"/abs/ws/initial_full_frames"}
//	← {"id":1,"ok":true,"protocol":1,"overrides":true,"runtime":"python 3.11.2, numpy 1.24.2"}
//	→ {"id":2,"op":"reconstruct","level":2,"frame":["00A…",…]}                 ← {"id":2,"state":7,"level":2}
//	→ {"id":3,"op":"step","state":7,"action":{"name":"ACTION6","x":15,"y":47}} ← {"id":3,"state":8,"level":2,"status":"RUNNING"}
//	→ {"id":4,"op":"render","state":8}                                          ← {"id":4,"frame":["…",…]}
//	→ {"id":5,"op":"override","state":8,"frame":[…],"level":2,"attempt":1,"step":3}   ← {"id":5,"frame":[…]}
//	→ {"id":6,"op":"plan","state":8,"goal":{"x":3,"y":4}}   ← {"id":6,"plan":[{"name":"ACTION1"},"ACTION2",…]} or {"id":6,"plan":null}
//	→ {"id":7,"op":"plan","state":8,"module":"level_2_planner_1","goal":…}   (an auxiliary planner; same answer)
//	→ {"id":7,"op":"key","state":8}                         ← {"id":7,"key":"<32 hex digits>"}
//	any failure   ← {"id":n,"error":"one line","kind":"contract","func":"world_model_engine.py","traceback":"Traceback …"}
//
// In detail:
//
//   - hello comes first, within SubprocessOptions.LoadTimeout: the program
//     loads the model from "workspace" and answers with the same protocol
//     number. "overrides" is true when the model has apply_render_overrides;
//     otherwise Go never sends override and uses the rendered frame.
//     "runtime" is free text (Subprocess.Runtime).
//   - States stay in the program, named by handles: positive integers it
//     chooses, unique for its life. A response that makes a state gives its
//     handle and its "level" (≥ 1). When Go drops a State (a cleanup after
//     garbage collection), the handle is sent in the "release" list of a
//     later request, of any op; the program forgets those states before
//     handling the request. A handle it does not know is an error of kind
//     "state".
//   - Keys: searches in Go (BFS) deduplicate by State.Key. A key is 32 hex
//     digits, a 128-bit hash of the state's value; equal states must have
//     equal keys. Go asks with "key" the first time; from then on
//     reconstruct and step requests carry "key":true and their responses
//     carry "key" (or "key_error": why the state has none). Verification
//     never asks.
//   - Frames from Go are 64 strings (rows, top first) of 64 uppercase hex
//     digits, as in the session's ASCII files. Frames from the program are
//     lists of 64 rows, each a string of hex digits (either case) or a list
//     of 64 integers; any other shape or a value outside 0..15 is ErrContract.
//   - step's "action" is {"name":"ACTION1".."ACTION7"}, with "x" and "y"
//     for ACTION6; its "status" is RUNNING, LEVEL_COMPLETED or GAME_OVER.
//     override's "step" is 0 for the initial frame, else the 1-based step.
//   - plan: without "goal" the program calls planner(state), with it
//     planner(state, goal=G); with "module" it calls that module's planner
//     (the adapter: <workspace>/<module>.py; a missing one is kind
//     "no_planner"). "plan" is null (None) or a list of actions, each
//     an object {"name":…} (plus integer "x", "y" for ACTION6) or a bare name;
//     it is decoded as the Starlark runtime decodes plans (RESET refused).
//   - Errors: "error" is one line; "traceback" is printed under it
//     (CallError.Backtrace). "kind" is "contract" (ErrContract), "no_planner"
//     (ErrNoPlanner), "missing" (a model file is missing: fs.ErrNotExist),
//     "state" (ErrForeignState), or absent: the model raised. "func" names the
//     model file when loading it failed; otherwise the error is the request's
//     function's (CallError.Func). The program keeps running after an error
//     response.
//   - A program that exits, writes a line that is not the response it owes
//     (not JSON, another id) or a line over 64 MiB fails the call with
//     ErrSubprocess, the call named, its exit status and stderr tail shown;
//     it is killed and the Subprocess is unusable.
//   - Time: when a call's context is done (verify's whole-run limit of
//     180 s) the process group is killed with SIGKILL and the error wraps
//     ctx.Err(), so the verifier prints its too-slow message.
//     SubprocessOptions.CallTimeout bounds each call but plan (ErrCallTimeout);
//     the context given to LoadSubprocess bounds the program's life.
//
// # Subprocess runtime: the sandbox
//
// SubprocessOptions.Sandbox (issue 15 item 7). By default (SandboxAuto) the
// program runs under bubblewrap when bwrap is on PATH and `bwrap --ro-bind
// / / … true` with the sandbox's namespaces works (checked once per
// process; inside some containers unprivileged namespaces are disabled):
//
//   - the whole file system read-only; /tmp, /var/tmp and /run private and
//     empty (so no daemon's socket — D-Bus, Docker, an ssh agent — is
//     reachable), with the workspace, the full frames folder, the adapter's
//     folder and the folders of absolute paths named in the command bound
//     read-only on top; private /dev and /proc;
//   - no network (--unshare-net: a loopback of its own), its own PID, IPC
//     and UTS namespaces, a new session (no TIOCSTI), --die-with-parent;
//     the PID namespace ends with the program, so every process it started
//     — setsid or not — is killed when it exits or is killed;
//   - with prlimit (util-linux) as the program's parent: RLIMIT_AS
//     MemoryLimit (DefaultSubprocessMemory, 4 GiB), RLIMIT_NPROC
//     MaxProcesses (DefaultSubprocessProcesses, 64; the kernel does not
//     apply it to root) and RLIMIT_FSIZE 64 MiB. bwrap itself has no
//     rlimit options.
//
// Not covered: the program reads every file the user may read (it can
// send them nowhere but its protocol answers and stderr); its private /tmp
// is memory, bounded per file only.
//
// Without a usable bwrap, SandboxAuto prints one line ("world model: bwrap
// not found …; running the model program in guard-rail mode (no
// sandbox)") to SubprocessOptions.Notice and falls back to guard-rail mode
// (SandboxOff): the program runs as the user in a process group of its own
// that is killed with SIGKILL on timeouts and at Close — a process that
// called setsid escapes it, and nothing stops writes, network or memory.
// SandboxBwrap fails instead of falling back. Subprocess.Sandbox names the
// mode used.
//
// # Subprocess runtime: the Python adapter
//
// AdapterSource (adapter/evident_adapter.py, embedded) is a program of this
// protocol that runs the seed's Python world model unchanged: the workspace's
// PythonEngineFile, PythonStateIOFile and PythonPlannerFile (loaded lazily on
// the first plan), defining world_model_engine, initial_state_reconstruction,
// state_renderer, apply_render_overrides (optional) and planner. Frames reach
// the model as numpy int16 arrays indexed [row, column]; renderers return
// anything numpy.asarray makes a 64×64 integer array of (integral floats
// pass, as with the seed's np.array_equal). Statuses are the seed's strings
// "RUNNING", "LEVEL_COMPLETED", "GAME_OVER". The model's imports of the
// baseline workspace's helper modules are served by the adapter:
// game_status (the three statuses) and load_initial_full_frame
// (load_initial_full_frame(level_index) → int16 array of
// initial_full_frames/level_N.txt or None, INITIAL_FULL_FRAMES_DIR); the
// workspace's own copies of these are not used. print() output goes to
// stderr, never into the protocol. Command "python" is short for
// "python3 {adapter}": the adapter is written to a temporary folder that
// Close removes; "{adapter}" works with any interpreter
// ("/usr/bin/python3 {adapter}"), and the adapter may as well be run from
// the repository or a copy in the workspace. It needs Python 3 with numpy;
// without numpy hello fails with a message saying so.
//
// Imports (baseline1's agent image, Dockerfile.agent): model files may
// import numpy, scipy, sympy, networkx, the standard modules of
// ALLOWED_STDLIB in the adapter (collections, heapq, math, random,
// itertools, functools, dataclasses, typing, sys, time, queue, hashlib, …;
// what sys.modules reaches is refused by the audit hook below), the served modules game_status,
// load_initial_full_frame and state_reconstruction_tools (simulate_actions
// and replay_actions only; its session readers are not served), and the
// workspace's own world_model_*.py and level_N_planner_i.py files; every
// other module (os, pathlib, subprocess, socket, …) is refused
// with `import of 'os' refused: …`. open, input, breakpoint, exec, eval,
// compile, exit and quit are refused in model code, and
// load_initial_full_frame works only while initial_state_reconstruction
// runs.
//
// The sandbox (decision): at hello the adapter installs a PEP 578 audit
// hook that no Python code can remove or reach, whose policy is fixed then.
// For the rest of the process it refuses opening any file for writing;
// opening for reading anything but the interpreter's own files (sys.path),
// the workspace's *.py files and initial_full_frames/level_N.txt; listing
// folders outside sys.path; every os.* event (process start, file-system
// changes, kill, …), subprocess, socket, ctypes, gc walks, shutil, tempfile,
// glob, sqlite3 and the network clients' events; and imports of modules
// whose C halves act without audit events (_posixsubprocess, _socket,
// sqlite3, fcntl, mmap, …). The one exception is subprocess, which sympy
// imports at its top (sympy.printing.preview, sympy.testing): it is replaced
// by a stub module whose every name is a class that refuses to be called
// (`PermissionError: subprocess.Popen refused in a world model: …`), so
// sympy loads and no process can be started through it. The message names the call:
// `PermissionError: open('client/session/…') refused in a world model: it
// reads no files; …` or `os.system refused in a world model: …`. So
// numpy.load, networkx.read_edgelist and os reached by introspection are
// refused alike. Not covered: C code that makes system calls without an
// audit event (none is known in numpy, scipy or networkx), memory, the
// clock. Needs Python ≥ 3.8. States are not copied between calls: an engine
// that mutates its input state behaves as under the seed's own scripts
// (verification replays one chain of states) but misleads a search run
// from Go.
//
// # Choosing the interpreter
//
// FindPython (the command line's --python, "--model-cmd python", or a
// workspace with world_model_engine.py and no world_model_engine.star):
// the --python value, else the first python3 in PATH's folders that
// imports numpy on Python ≥ 3.8, else FallbackPythons (/usr/bin/python3,
// /usr/local/bin/python3: where Debian installs python3-numpy, and where a
// source build goes; on a machine whose pyenv python3 comes first without
// numpy, Debian's is found). The command line names the one chosen on
// stderr: `python: /usr/bin/python3 (python 3.11.2, numpy 1.24.2); skipped
// /root/.pyenv/shims/python3 (cannot import numpy)`.
package worldmodel
