package worldmodel

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.starlark.net/starlark"

	"evident/arc/session"
)

// Bounds of a breadth-first search, in distinct states.
const (
	// DefaultMaxNodes is the search bound when none is given.
	DefaultMaxNodes = 100_000
	// MaxNodesLimit is the largest bound a search accepts.
	MaxNodesLimit = 5_000_000
)

// BFSStats describes one search.
type BFSStats struct {
	// States is the number of distinct states reached, the start included.
	States int
	// Expanded is the number of states whose actions were tried.
	Expanded int
	// EngineCalls is the number of world_model_engine calls.
	EngineCalls int
	// Truncated is true when the search stopped at its bound without a plan.
	Truncated bool
}

// searchSpec is one search over states S and actions A.
type searchSpec[S, A any] struct {
	actions  func(S) ([]A, error)
	step     func(S, A) (S, session.Status, error)
	goal     func(S, session.Status) (bool, error) // nil: status is LEVEL_COMPLETED
	key      func(S) (StateKey, error)
	maxNodes int
	check    func() error // called once per expanded state
}

// search is breadth-first search: it returns a shortest action sequence from
// start to a goal (empty when start is one), or nil when none exists within
// maxNodes distinct states. The goal is tested on every generated
// (state, status) pair; only RUNNING states are expanded, and states with a
// key already seen are dropped. Actions are tried in the order given, so the
// plan found is the first shortest one in that order.
func search[S, A any](start S, sp searchSpec[S, A]) ([]A, BFSStats, error) {
	var st BFSStats
	if sp.goal != nil {
		ok, err := sp.goal(start, session.Running)
		if err != nil || ok {
			return []A{}, st, err
		}
	}
	k0, err := sp.key(start)
	if err != nil {
		return nil, st, err
	}
	type node struct {
		parent int
		act    A
	}
	type item struct {
		s    S
		node int
	}
	seen := map[StateKey]struct{}{k0: {}}
	nodes := []node{{parent: -1}}
	queue := []item{{start, 0}}
	st.States = 1
	for len(queue) > 0 {
		if err := sp.check(); err != nil {
			return nil, st, err
		}
		cur := queue[0]
		queue = queue[1:]
		acts, err := sp.actions(cur.s)
		if err != nil {
			return nil, st, err
		}
		st.Expanded++
		for _, a := range acts {
			ns, status, err := sp.step(cur.s, a)
			st.EngineCalls++
			if err != nil {
				return nil, st, err
			}
			var done bool
			if sp.goal == nil {
				done = status == session.LevelCompleted
			} else if done, err = sp.goal(ns, status); err != nil {
				return nil, st, err
			}
			if done {
				plan := []A{a}
				for n := cur.node; n > 0; n = nodes[n].parent {
					plan = append(plan, nodes[n].act)
				}
				slices.Reverse(plan)
				return plan, st, nil
			}
			if status != session.Running {
				continue
			}
			k, err := sp.key(ns)
			if err != nil {
				return nil, st, err
			}
			if _, dup := seen[k]; dup {
				continue
			}
			if len(seen) >= sp.maxNodes {
				st.Truncated = true
				return nil, st, nil
			}
			seen[k] = struct{}{}
			nodes = append(nodes, node{parent: cur.node, act: a})
			queue = append(queue, item{ns, len(nodes) - 1})
			st.States++
		}
	}
	return nil, st, nil
}

// BFSOptions configures BFS.
type BFSOptions struct {
	// Actions are tried in this order from every state.
	Actions []session.Action
	// Goal reports whether a reached (state, status) ends the search; nil
	// means status == LEVEL_COMPLETED. The start state is tested with
	// RUNNING.
	Goal func(s State, status session.Status) bool
	// MaxNodes bounds the distinct states kept; 0 means DefaultMaxNodes.
	MaxNodes int
}

// BFS searches m's dynamics breadth-first from start for a shortest plan
// reaching the goal, deduplicating states by State.Key. It returns nil (and
// stats.Truncated when the bound was hit) when there is no plan within
// opts.MaxNodes states. Errors are the engine's, a key error, ctx.Err(), or
// a bad MaxNodes.
func BFS(ctx context.Context, m Model, start State, opts BFSOptions) ([]session.Action, BFSStats, error) {
	maxNodes := opts.MaxNodes
	if maxNodes == 0 {
		maxNodes = DefaultMaxNodes
	}
	if maxNodes < 1 || maxNodes > MaxNodesLimit {
		return nil, BFSStats{}, fmt.Errorf("bfs: max_nodes %d, want 1..%d", maxNodes, MaxNodesLimit)
	}
	sp := searchSpec[State, session.Action]{
		actions: func(State) ([]session.Action, error) { return opts.Actions, nil },
		step: func(s State, a session.Action) (State, session.Status, error) {
			return m.Step(ctx, s, a)
		},
		key:      func(s State) (StateKey, error) { return s.Key() },
		maxNodes: maxNodes,
		check:    ctx.Err,
	}
	if opts.Goal != nil {
		sp.goal = func(s State, st session.Status) (bool, error) { return opts.Goal(s, st), nil }
	}
	return search(start, sp)
}

// builtinBFS is the sandbox's bfs(start, actions, is_goal=None, key=None,
// max_nodes=100000): see the package doc.
func (m *Starlark) builtinBFS(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var start, actions starlark.Value
	var isGoal, key starlark.Value = starlark.None, starlark.None
	maxNodes := DefaultMaxNodes
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "actions", &actions,
		"is_goal?", &isGoal, "key?", &key, "max_nodes?", &maxNodes); err != nil {
		return nil, err
	}
	if m.ctx == nil {
		return nil, errors.New("bfs: called outside a world-model call")
	}
	if maxNodes < 1 || maxNodes > MaxNodesLimit {
		return nil, fmt.Errorf("bfs: max_nodes %d, want 1..%d", maxNodes, MaxNodesLimit)
	}
	normalize := func(v starlark.Value) ([]starlark.Value, error) {
		seq, ok := v.(starlark.Indexable)
		if _, isStr := v.(starlark.String); !ok || isStr {
			return nil, fmt.Errorf("bfs: actions must be a list of actions or a function returning one, got %s", v.Type())
		}
		out := make([]starlark.Value, seq.Len())
		for i := range out {
			a, err := actionOf(seq.Index(i))
			if err != nil {
				return nil, fmt.Errorf("bfs: action %d: %v", i+1, err)
			}
			if out[i], err = m.actionValue(a); err != nil {
				return nil, fmt.Errorf("bfs: action %d: %v", i+1, err)
			}
		}
		return out, nil
	}
	sp := searchSpec[starlark.Value, starlark.Value]{maxNodes: maxNodes, check: m.ctx.Err}
	if fn, ok := actions.(starlark.Callable); ok {
		sp.actions = func(s starlark.Value) ([]starlark.Value, error) {
			v, err := starlark.Call(thread, fn, starlark.Tuple{s}, nil)
			if err != nil {
				return nil, err
			}
			return normalize(v)
		}
	} else {
		fixed, err := normalize(actions)
		if err != nil {
			return nil, err
		}
		sp.actions = func(starlark.Value) ([]starlark.Value, error) { return fixed, nil }
	}
	sp.step = func(s, a starlark.Value) (starlark.Value, session.Status, error) {
		v, err := starlark.Call(thread, m.engine, starlark.Tuple{s, a}, nil)
		if err != nil {
			return nil, "", fmt.Errorf("bfs: %s: %w", FuncEngine, err)
		}
		ns, status, err := m.engineResult(v)
		if err != nil {
			return nil, "", fmt.Errorf("bfs: %w", err)
		}
		return ns.d, status, nil
	}
	if fn, ok := isGoal.(starlark.Callable); ok {
		sp.goal = func(s starlark.Value, status session.Status) (bool, error) {
			v, err := starlark.Call(thread, fn, starlark.Tuple{s, starlark.String(status)}, nil)
			if err != nil {
				return false, err
			}
			return bool(v.Truth()), nil
		}
	} else if isGoal != starlark.None {
		return nil, fmt.Errorf("bfs: is_goal must be a function(state, status) or None, got %s", isGoal.Type())
	}
	if fn, ok := key.(starlark.Callable); ok {
		sp.key = func(s starlark.Value) (StateKey, error) {
			v, err := starlark.Call(thread, fn, starlark.Tuple{s}, nil)
			if err != nil {
				return StateKey{}, err
			}
			return ValueKey(v)
		}
	} else if key == starlark.None {
		sp.key = ValueKey
	} else {
		return nil, fmt.Errorf("bfs: key must be a function(state) or None, got %s", key.Type())
	}
	plan, _, err := search(start, sp)
	if err != nil {
		return nil, err
	}
	if plan == nil {
		return starlark.None, nil
	}
	return starlark.NewList(plan), nil
}
