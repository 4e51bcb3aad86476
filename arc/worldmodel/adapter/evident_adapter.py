"""evident_adapter.py: run a Python world model (seed 003, baseline1) for evident.

evident starts this program with --model-cmd and talks to it over the
JSON-lines protocol of package evident/arc/worldmodel ("Subprocess runtime"):
one request line on stdin, one response line on stdout, strictly in turn. It
loads the agent's files from the workspace named in the hello request,
unchanged:

    world_model_engine.py        world_model_engine(state, action) -> (state, status)
    world_model_state_io.py      initial_state_reconstruction(level_index, initial_frame) -> state
                                 state_renderer(state) -> 64x64 numpy array
                                 apply_render_overrides(frame, state, level_index, attempt_index, step_count)  (optional)
    world_model_main_planner.py  planner(state, goal=None) -> list of actions | None  (planner commands only)

Frames reach the model as numpy int16 arrays (rows x columns, values 0..15);
states stay here, named by integer handles. Model code sees three modules the
baseline workspace has: game_status (RUNNING, LEVEL_COMPLETED, GAME_OVER),
load_initial_full_frame (load_initial_full_frame(level_index) -> array or
None, usable only inside initial_state_reconstruction) and
state_reconstruction_tools (simulate_actions, replay_actions only: the
session readers are not served). The plan request may name an auxiliary
planner module (level_N_planner_i), loaded like the model files.

What model code may import (baseline1's agent image): numpy, scipy,
sympy, networkx, the standard modules of ALLOWED_STDLIB (sys, time, queue
and hashlib among them), the three served modules,
and the workspace's own world_model_*.py and level_N_planner_i.py files.
open, input, breakpoint, exec, eval, compile, exit and quit are refused in
model code; print() output goes to stderr, so it cannot corrupt the protocol.

The sandbox: at hello the adapter installs an audit hook (PEP 578) that it
cannot remove and that model code cannot reach. From then on, for the whole
process, it refuses: opening a file for writing, opening for reading any
file but the Python installation's (sys.path), the workspace's *.py files
and initial_full_frames/level_N.txt; listing folders outside sys.path;
starting processes, sockets, ctypes calls, the gc module's object walks and
every os-level change to the file system (see audit()). This holds for
numpy.load, scipy.io, networkx.read_* and introspection tricks alike,
because the hook sees the interpreter's own events. Not covered: code that
makes system calls from C without an audit event (no such path is known in
numpy, scipy or networkx), memory and CPU use (evident's time limits kill
the process), and the clock.
Usage: python3 evident_adapter.py   (no arguments; evident sends everything)
This file is part of evident (arc/worldmodel/adapter); evident writes it to a
temporary folder for --model-cmd python.
"""

import builtins
import hashlib
import json
import os
import re
import sys
import traceback
import types

PROTOCOL = 1

RUNNING = "RUNNING"
LEVEL_COMPLETED = "LEVEL_COMPLETED"
GAME_OVER = "GAME_OVER"
STATUSES = (RUNNING, LEVEL_COMPLETED, GAME_OVER)

ENGINE = "world_model_engine"
STATE_IO = "world_model_state_io"
PLANNER = "world_model_main_planner"
MODEL_MODULES = (ENGINE, STATE_IO, PLANNER)

F_ENGINE = "world_model_engine"
F_RECONSTRUCT = "initial_state_reconstruction"
F_RENDER = "state_renderer"
F_OVERRIDES = "apply_render_overrides"
F_PLANNER = "planner"

# Standard modules that give no file, process or network access of their
# own (random included: baseline1's agents use it, seeded, in planners; sys
# for sys.setrecursionlimit, time, queue and hashlib as baseline1's models
# use them). What sys reaches (sys.modules['os'], this module's real_open)
# is still refused by the audit hook: it sees the interpreter's events, not
# how a function was found.
ALLOWED_STDLIB = frozenset("""
    __future__ abc array bisect cmath collections contextlib copy dataclasses
    decimal enum fractions functools hashlib heapq itertools json math numbers
    operator queue random re statistics string sys time types typing
""".split())
# Third-party packages of baseline1's agent image (Dockerfile.agent:
# python3-numpy, python3-scipy, python3-sympy, python3-networkx; its prompt
# names NumPy, SciPy, Sympy and NetworkX) that a world model may import.
ALLOWED_PACKAGES = ("numpy", "scipy", "sympy", "networkx")
SERVED_MODULES = ("game_status", "load_initial_full_frame", "state_reconstruction_tools")
ALLOWED_IMPORTS = ALLOWED_STDLIB | frozenset(ALLOWED_PACKAGES) | frozenset(SERVED_MODULES)
# The workspace's own modules a model file may import.
WORKSPACE_MODULE = re.compile(r"(world_model_[A-Za-z0-9_]+|level_[0-9]+_planner_[0-9]+)\Z")
# Any module the plan request may name as an auxiliary planner.
AUX_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
IMPORT_RULE = ("a world model may import only numpy, scipy, sympy, networkx, game_status, load_initial_full_frame, "
               "state_reconstruction_tools, the workspace's world_model_*.py and level_N_planner_i.py files and "
               "the standard modules " + ", ".join(sorted(ALLOWED_STDLIB)) + " (evident adapter)")

ADAPTER_FILE = os.path.abspath(__file__)
real_import = builtins.__import__
real_open = builtins.open

np = None  # numpy, imported at hello
numpy_error = None

workspace = None
full_frames_dir = None
in_reconstruction = False
states = {}
next_handle = 1
planner_fn = None


class ContractError(Exception):
    """A function returned something the seed's contract does not allow."""


class Failure(Exception):
    """A failure with a protocol kind (missing, no_planner, state, runtime)."""

    def __init__(self, kind, msg, func=None):
        Exception.__init__(self, msg)
        self.kind = kind
        self.func = func


# ---- what model code sees -------------------------------------------------

def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0:
        raise ImportError("relative import refused: " + IMPORT_RULE)
    top = name.partition(".")[0]
    if WORKSPACE_MODULE.match(top) and top not in sys.modules:
        if os.path.isfile(os.path.join(workspace, top + ".py")) or top in MODEL_MODULES:
            return load_model_module(top)
        raise ModuleNotFoundError("No module named %r (no %s.py in the workspace)" % (top, top), name=top)
    if top not in ALLOWED_IMPORTS and not WORKSPACE_MODULE.match(top):
        raise ImportError("import of %r refused: %s" % (name, IMPORT_RULE))
    return real_import(name, globals, locals, fromlist, level)


def refused(name, why):
    def f(*args, **kwargs):
        raise PermissionError("%s() refused in a world model: %s (evident adapter)" % (name, why))
    f.__name__ = name
    return f


SAFE_BUILTINS = dict(builtins.__dict__)
SAFE_BUILTINS["__import__"] = guarded_import
SAFE_BUILTINS["open"] = refused("open", "it reads no files; initial_state_reconstruction may call load_initial_full_frame(level_index)")
for _name in ("input", "breakpoint", "exit", "quit"):
    SAFE_BUILTINS[_name] = refused(_name, "it has no console")
for _name in ("exec", "eval", "compile"):
    SAFE_BUILTINS[_name] = refused(_name, "it runs only its own files")


def full_frame_path(level_index):
    return os.path.join(full_frames_dir, "level_%d.txt" % int(level_index))


def load_initial_full_frame(level_index):
    """The level's initial full frame (initial_full_frames/level_N.txt) as an
    int16 array, or None when there is no such file. Only
    initial_state_reconstruction may call it."""
    if not in_reconstruction:
        raise PermissionError("load_initial_full_frame may be called only from initial_state_reconstruction")
    path = full_frame_path(level_index)
    if not os.path.isfile(path):
        return None
    with real_open(path, "r", encoding="ascii", errors="replace") as f:
        rows = [line.strip() for line in f if line.strip()]
    if not rows:
        raise ValueError("%s: no rows" % path)
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError("%s:%d: row has %d cells, want %d" % (path, i + 1, len(row), width))
    try:
        return np.array([[int(c, 16) for c in row] for row in rows], dtype=np.int16)
    except ValueError:
        raise ValueError("%s: not a frame of hex digits" % path) from None


def make_support_modules():
    gs = types.ModuleType("game_status")
    gs.RUNNING, gs.LEVEL_COMPLETED, gs.GAME_OVER = RUNNING, LEVEL_COMPLETED, GAME_OVER
    lf = types.ModuleType("load_initial_full_frame")
    lf.load_initial_full_frame = load_initial_full_frame
    lf.INITIAL_FULL_FRAMES_DIR = full_frames_dir
    lf.get_initial_full_frame_path = full_frame_path
    srt = types.ModuleType("state_reconstruction_tools")
    srt.simulate_actions = simulate_actions
    srt.replay_actions = simulate_actions
    sys.modules["game_status"] = gs
    sys.modules["load_initial_full_frame"] = lf
    sys.modules["state_reconstruction_tools"] = srt


def simulate_actions(start_state, actions):
    """baseline1's state_reconstruction_tools.simulate_actions: run actions
    through world_model_engine from start_state, stopping at the first
    non-RUNNING status; returns (state, status)."""
    state, status = start_state, RUNNING
    for action in actions:
        state, status = M.engine(state, action)
        if status != RUNNING:
            break
    return state, status


def load_model_module(name):
    """Execute <workspace>/<name>.py once as module name, with SAFE_BUILTINS."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    path = os.path.join(workspace, name + ".py")
    if not os.path.isfile(path):
        raise Failure("missing", "%s.py not found in %s" % (name, workspace), name + ".py")
    with real_open(path, "rb") as f:
        src = f.read()
    mod = types.ModuleType(name)
    mod.__file__ = path
    mod.__builtins__ = SAFE_BUILTINS
    sys.modules[name] = mod
    try:
        code = compile(src, path, "exec", dont_inherit=True)
        exec(code, mod.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def need_func(mod, file, name, required=True):
    fn = getattr(mod, name, None)
    if fn is None:
        if required:
            raise Failure("contract", "%s does not define %s" % (file, name), file)
        return None
    if not callable(fn):
        raise Failure("contract", "%s in %s is a %s, want a function" % (name, file, type(fn).__name__), file)
    return fn


# ---- frames, states, keys -------------------------------------------------

HEX = b"0123456789ABCDEF"


def decode_frame(rows):
    """Hex rows -> writable int16 array."""
    lut = decode_frame.lut
    if lut is None:
        lut = np.full(256, -1, dtype=np.int16)
        for i, c in enumerate(HEX):
            lut[c] = i
            lut[ord(chr(c).lower())] = i
        decode_frame.lut = lut
    width = len(rows[0]) if rows else 0
    raw = np.frombuffer("".join(rows).encode("ascii"), dtype=np.uint8)
    return lut[raw].reshape(len(rows), width)


decode_frame.lut = None


def encode_frame(func, v):
    """A frame returned by the model -> hex rows (values 0..15) or lists of
    ints (evident reports what is wrong with them)."""
    try:
        a = np.asarray(v)
    except Exception as e:
        raise ContractError("returned something that is not a frame: %s" % e)
    if a.dtype.kind == "f":
        if a.size and not np.all(np.isfinite(a) & (a == np.floor(a))):
            raise ContractError("returned a frame with non-integer values (dtype %s), want integers 0..15" % a.dtype)
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu":
        raise ContractError("returned a %s of dtype %s, want a 64x64 array of integers 0..15" % (type(v).__name__, a.dtype))
    if a.ndim != 2:
        raise ContractError("returned an array of shape %s, want (64, 64)" % (a.shape,))
    if a.size == 0:
        return []
    if a.min() < 0 or a.max() > 15:
        return a.tolist()
    chars = np.frombuffer(HEX, dtype=np.uint8)[a.astype(np.intp)]
    return [row.tobytes().decode("ascii") for row in chars]


def state_level(func, st):
    if not isinstance(st, dict):
        raise ContractError("returned a %s as the state, want a dict with an int \"level\"" % type(st).__name__)
    if "level" not in st:
        raise ContractError("returned a state without \"level\"")
    lv = st["level"]
    if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or int(lv) < 1:
        raise ContractError("returned a state whose \"level\" is %s, want an int >= 1" % short(lv))
    return int(lv)


def short(v):
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def canon(v, out, depth=0):
    """Append the canonical encoding of v: dict entries and set elements are
    sorted, so equal values built in different orders encode alike."""
    if depth > 200:
        raise TypeError("state nested deeper than 200 levels (or contains itself)")
    if v is None:
        out.append(b"n")
    elif isinstance(v, (bool, np.bool_)):
        out.append(b"T" if v else b"F")
    elif isinstance(v, (int, np.integer)):
        out.append(b"i%d;" % int(v))
    elif isinstance(v, (float, np.floating)):
        f = float(v)
        out.append(b"f" + repr(f + 0.0).encode() + b";")
    elif isinstance(v, str):
        b = v.encode("utf-8", "surrogatepass")
        out.append(b"s%d:" % len(b) + b)
    elif isinstance(v, (bytes, bytearray)):
        out.append(b"y%d:" % len(v) + bytes(v))
    elif isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        if a.dtype.hasobject:
            out.append(b"A%s;" % repr(a.shape).encode())
            for e in a.flat:
                canon(e, out, depth + 1)
        else:
            out.append(b"a" + a.dtype.str.encode() + repr(a.shape).encode() + b";" + a.tobytes())
    elif isinstance(v, (tuple, list)):
        out.append((b"t%d:" if isinstance(v, tuple) else b"l%d:") % len(v))
        for e in v:
            canon(e, out, depth + 1)
    elif isinstance(v, dict):
        parts = []
        for k, e in v.items():
            kb, eb = [], []
            canon(k, kb, depth + 1)
            canon(e, eb, depth + 1)
            k = b"".join(kb)
            parts.append(b"%d:" % len(k) + k + b"".join(eb))
        sorted_parts(b"d", parts, out)
    elif isinstance(v, (set, frozenset)):
        parts = []
        for e in v:
            eb = []
            canon(e, eb, depth + 1)
            parts.append(b"".join(eb))
        sorted_parts(b"S", parts, out)
    else:
        raise TypeError("a %s has no value key (states must hold only data: None, bool, int, float, str, bytes, "
                        "tuple, list, dict, set, numpy array)" % type(v).__name__)


def sorted_parts(tag, parts, out):
    parts.sort()
    out.append(tag + b"%d:" % len(parts))
    for p in parts:
        out.append(b"%d:" % len(p) + p)


def state_key(st):
    out = []
    canon(st, out)
    return hashlib.blake2b(b"".join(out), digest_size=16).hexdigest()


def new_state(func, st, req):
    global next_handle
    level = state_level(func, st)
    h = next_handle
    next_handle += 1
    states[h] = st
    resp = {"state": h, "level": level}
    if req.get("key"):
        try:
            resp["key"] = state_key(st)
        except Exception as e:
            resp["key_error"] = str(e)
    return resp


def get_state(req):
    h = req.get("state")
    try:
        return states[h]
    except (KeyError, TypeError):
        raise Failure("state", "unknown state handle %r" % (h,))


def action_value(a):
    out = {"name": a["name"]}
    if a["name"] == "ACTION6":
        out["x"], out["y"] = a["x"], a["y"]
    return out


def jsonable(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, str):
        return v
    return repr(v)


def encode_action(a):
    if isinstance(a, str):
        return a
    if isinstance(a, dict):
        return {k: jsonable(a[k]) for k in ("name", "x", "y") if k in a}
    return repr(a)



# ---- the sandbox (audit hook) ----------------------------------------------

# Modules whose import is refused once the sandbox is on, whoever imports
# them: their C halves start processes, open sockets or files without an
# audit event of their own.
DENIED_IMPORTS = frozenset("""
    _posixsubprocess subprocess multiprocessing _multiprocessing socket _socket ssl _ssl
    sqlite3 _sqlite3 fcntl resource pty termios mmap _posixshmem dbm _dbm _gdbm
""".split())
# Audit events refused outright (prefixes end with ".").
DENIED_EVENT_PREFIXES = ("os.", "subprocess.", "socket.", "ctypes.", "shutil.", "tempfile.", "glob.",
                         "sqlite3.", "urllib.", "http.", "ftplib.", "smtplib.", "poplib.", "imaplib.",
                         "nntplib.", "telnetlib.", "webbrowser.", "syslog.", "fcntl.", "resource.",
                         "pty.", "winreg.", "msvcrt.", "_winapi.", "gc.")
DENIED_EVENTS = frozenset(("builtins.input", "builtins.input/result", "signal.pthread_kill", "sys._current_frames"))
# Denied modules that allowed libraries import at their top (see
# install_sandbox): stubbed instead of refused.
STUBBED_IMPORTS = ("subprocess",)


def refused_module(name):
    """A module whose every attribute is a class that refuses to be called
    (with the sandbox's message). A class, not a function, so that a
    library's `except subprocess.CalledProcessError` still parses and
    `from subprocess import STDOUT` still imports."""
    m = types.ModuleType(name)

    def getattr_(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        what = "%s.%s" % (name, attr)

        def new(cls, *args, **kwargs):
            raise PermissionError("%s refused in a world model: no processes, sockets or files (evident sandbox)" % what)
        return type(attr, (Exception,), {"__new__": new, "__module__": name})
    m.__getattr__ = getattr_
    return m


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def install_sandbox():
    """Install the audit hook (once, for the life of the process). Its policy
    is fixed here and held only in the hook's closure, which no Python code
    can reach once this function returns (gc walks are refused)."""
    roots = []
    for p in sys.path + [os.path.dirname(os.__file__)]:
        if p and os.path.isdir(p):
            roots.append(os.path.realpath(p))
    roots = tuple(sorted(set(roots)))
    ws = os.path.realpath(workspace)
    frames = os.path.realpath(full_frames_dir)
    sep = os.sep
    realpath, fspath, fsdecode, dirname, basename = os.path.realpath, os.fspath, os.fsdecode, os.path.dirname, os.path.basename
    frame_file = re.compile(r"level_[0-9]+\.txt\Z")

    def under(path, root):
        return path == root or path.startswith(root + sep)

    def readable(path):
        if any(under(path, r) for r in roots):
            return True
        if dirname(path) == ws and path.endswith(".py"):
            return True
        return dirname(path) == frames and frame_file.match(basename(path)) is not None

    def refuse(what, why):
        raise PermissionError("%s refused in a world model: %s (evident sandbox)" % (what, why))

    def hook(event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & WRITE_FLAGS)
            if isinstance(path, int):
                if writing:
                    refuse("open(%d, %r)" % (path, mode), "it writes no files")
                return
            try:
                name = fsdecode(fspath(path))
            except Exception:
                refuse("open(%r)" % (path,), "not a file path")
            if writing:
                refuse("open(%r, %r)" % (name, mode), "it writes no files")
            if not readable(realpath(name)):
                refuse("open(%r)" % (name,), "it reads no files; initial_state_reconstruction may call "
                       "load_initial_full_frame(level_index)")
        elif event == "import":
            if args and isinstance(args[0], str) and args[0].partition(".")[0] in DENIED_IMPORTS:
                refuse("import of %r" % args[0], "no processes, sockets or files")
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args else None
            try:
                name = realpath(fsdecode(fspath(path if path is not None else ".")))
            except Exception:
                name = None
            if name is None or not any(under(name, r) for r in roots):
                refuse("%s(%r)" % (event, path), "it lists no folders")
        elif event.startswith(DENIED_EVENT_PREFIXES) or event in DENIED_EVENTS:
            refuse(event, "no processes, network, file changes or interpreter introspection")

    # An allowed library may import a denied module at its top without using
    # it there: sympy (baseline1's image has it) imports subprocess through
    # sympy.testing for its test runner. Such a module is replaced by a stub
    # whose every attribute is refused, so the library loads and a process
    # can still not be started through it.
    for name in STUBBED_IMPORTS:
        if name not in sys.modules:
            sys.modules[name] = refused_module(name)
    sys.addaudithook(hook)

# ---- operations -----------------------------------------------------------

M = types.SimpleNamespace(engine=None, reconstruct=None, render=None, overrides=None)


def op_hello(req):
    global workspace, full_frames_dir
    if req.get("protocol") != PROTOCOL:
        raise Failure("runtime", "protocol %r not supported; this adapter speaks protocol %d" % (req.get("protocol"), PROTOCOL))
    if np is None:
        raise Failure("runtime", "numpy cannot be imported by %s (%s): install it (Debian: apt-get install python3-numpy) "
                      "or name an interpreter that has it, e.g. --model-cmd '/usr/bin/python3 {adapter}'" % (sys.executable, numpy_error))
    workspace = os.path.abspath(req["workspace"])
    full_frames_dir = os.path.abspath(req.get("full_frames") or os.path.join(workspace, "initial_full_frames"))
    make_support_modules()
    install_sandbox()
    eng = load_model_module(ENGINE)
    M.engine = need_func(eng, ENGINE + ".py", F_ENGINE)
    sio = load_model_module(STATE_IO)
    M.reconstruct = need_func(sio, STATE_IO + ".py", F_RECONSTRUCT)
    M.render = need_func(sio, STATE_IO + ".py", F_RENDER)
    M.overrides = need_func(sio, STATE_IO + ".py", F_OVERRIDES, required=False)
    return {"ok": True, "protocol": PROTOCOL, "overrides": M.overrides is not None,
            "planner": os.path.isfile(os.path.join(workspace, PLANNER + ".py")),
            "runtime": "python %s, numpy %s" % (sys.version.split()[0], np.__version__)}


def op_reconstruct(req):
    global in_reconstruction
    frame = decode_frame(req["frame"])
    in_reconstruction = True
    try:
        st = M.reconstruct(int(req["level"]), frame)
    finally:
        in_reconstruction = False
    return new_state(F_RECONSTRUCT, st, req)


def op_step(req):
    st = get_state(req)
    res = M.engine(st, action_value(req["action"]))
    if isinstance(res, str) or not isinstance(res, (tuple, list)) or len(res) != 2:
        raise ContractError("returned %s, want a (state, status) pair" % short(res))
    nst, status = res
    resp = new_state(F_ENGINE, nst, req)
    if not isinstance(status, str) or status not in STATUSES:
        states.pop(resp["state"], None)
        raise ContractError("returned status %s, want RUNNING, LEVEL_COMPLETED or GAME_OVER" % short(status))
    resp["status"] = status
    return resp


def op_render(req):
    return {"frame": encode_frame(F_RENDER, M.render(get_state(req)))}


def op_override(req):
    st = get_state(req)
    frame = decode_frame(req["frame"])
    if M.overrides is None:
        return {"frame": req["frame"]}
    out = M.overrides(frame, st, int(req["level"]), int(req["attempt"]), int(req["step"]))
    return {"frame": encode_frame(F_OVERRIDES, out)}


def op_plan(req):
    global planner_fn
    st = get_state(req)
    module = req.get("module")
    if module is None:
        if planner_fn is None:
            planner_fn = load_planner(PLANNER)
        fn = planner_fn
    else:
        fn = aux_planners.get(module)
        if fn is None:
            if not isinstance(module, str) or not AUX_MODULE.match(module):
                raise Failure("runtime", "planner module %r is not a Python module name" % (module,))
            fn = aux_planners[module] = load_planner(module)
    goal = req.get("goal")
    plan = fn(st) if goal is None else fn(st, goal=goal)
    if plan is None:
        return {"plan": None}
    if isinstance(plan, (str, bytes, dict)) or not isinstance(plan, (list, tuple)):
        raise ContractError("returned a %s, want a list of actions or None" % type(plan).__name__)
    return {"plan": [encode_action(a) for a in plan]}


aux_planners = {}


def load_planner(name):
    """The planner function of workspace module name (the main planner or an
    auxiliary one such as level_4_planner_1)."""
    file = name + ".py"
    try:
        mod = load_model_module(name)
    except Failure as f:
        if f.kind == "missing":
            raise Failure("no_planner", "%s not found in %s" % (file, workspace), file)
        raise
    except BaseException as e:
        e.evident_func = file
        raise
    fn = getattr(mod, F_PLANNER, None)
    if fn is None and name != PLANNER:
        # baseline1 run_aux_planner.py's message.
        raise Failure("contract", "%s does not define planner(state)." % name, file)
    return need_func(mod, file, F_PLANNER)


def op_key(req):
    st = get_state(req)
    try:
        return {"key": state_key(st)}
    except Exception as e:
        raise ContractError(str(e))


OPS = {"hello": op_hello, "reconstruct": op_reconstruct, "step": op_step, "render": op_render,
       "override": op_override, "plan": op_plan, "key": op_key}
OP_FUNC = {"reconstruct": F_RECONSTRUCT, "step": F_ENGINE, "render": F_RENDER, "override": F_OVERRIDES, "plan": F_PLANNER}


def model_traceback(e):
    """The traceback of e without the adapter's own frames ("" when every
    frame is the adapter's)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) != ADAPTER_FILE]
    if not frames:
        return ""
    return ("Traceback (most recent call last):\n" + "".join(traceback.StackSummary.from_list(frames).format())
            + "".join(traceback.format_exception_only(type(e), e)))


def handle(req):
    for h in req.get("release") or ():
        states.pop(h, None)
    op = req.get("op")
    fn = OPS.get(op)
    if fn is None:
        raise Failure("runtime", "unknown op %r" % (op,))
    return fn(req)


def respond(out, resp):
    try:
        line = json.dumps(resp, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        line = json.dumps({"id": resp.get("id"), "error": "adapter could not encode its response: %s" % e})
    out.write(line.encode("utf-8") + b"\n")
    out.flush()


def main():
    global np, numpy_error
    sys.dont_write_bytecode = True
    # The protocol owns the real stdout; everything else printed (the model's
    # print(), warnings) goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        import numpy
        np = numpy
    except Exception as e:
        numpy_error = "%s: %s" % (type(e).__name__, e)
    inp = sys.stdin.buffer
    while True:
        line = inp.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        rid, req = None, {}
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                req = {}
                raise Failure("runtime", "a request must be a JSON object")
            rid = req.get("id")
            resp = handle(req)
        except ContractError as e:
            resp = {"error": str(e), "kind": "contract"}
        except Failure as e:
            resp = {"error": str(e), "kind": e.kind}
            if e.func:
                resp["func"] = e.func
        except BaseException as e:  # model code: any exception, SystemExit included
            if isinstance(e, KeyboardInterrupt):
                raise
            resp = {"error": error_line(e), "traceback": model_traceback(e)}
            func = getattr(e, "evident_func", None)
            if func is None and isinstance(e, SyntaxError) and e.filename:
                func = os.path.basename(e.filename)
            if func is None and req.get("op") == "hello":
                func = load_failure_file(e)
            if func:
                resp["func"] = func
        resp["id"] = rid
        respond(out, resp)


def error_line(e):
    """One line for e: "Type: message", or "file:line:col: SyntaxError: message"."""
    if isinstance(e, SyntaxError) and e.filename:
        return "%s:%s:%s: %s: %s" % (os.path.basename(e.filename), e.lineno, e.offset, type(e).__name__, e.msg)
    lines = traceback.format_exception_only(type(e), e)
    return lines[-1].strip() if lines else type(e).__name__


def load_failure_file(e):
    """The model file whose top-level code raised e during hello."""
    for f in reversed(traceback.extract_tb(e.__traceback__)):
        name = os.path.basename(f.filename)
        if name[:-3] in MODEL_MODULES and name.endswith(".py"):
            return name
    return None


if __name__ == "__main__":
    sys.exit(main())
