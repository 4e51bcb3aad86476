package worldmodel

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// DefaultMemoryLimit is the heap a Starlark world model may hold when
// StarlarkOptions.MemoryLimit is 0: 1 GiB (issue 15: "a configurable limit,
// default well under the machine's memory").
const DefaultMemoryLimit int64 = 1 << 30

// ErrMemoryLimit: a Starlark call made the heap grow past
// StarlarkOptions.MemoryLimit since the model was loaded; the call was
// stopped. The message names the function and the limit.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// ErrAbandoned: a call was told to stop (time or memory limit) but stayed
// inside a built-in that does not look at cancellation (a "%s" % v of a
// huge value, say) for longer than the grace period; the call returned
// without it and the model is unusable afterwards.
var ErrAbandoned = errors.New("world model abandoned")

const (
	// memPoll is how often the watchdog samples the heap while a call
	// runs. Starlark's own single operations are bounded (repetition by
	// 2^30 elements; concatenation by the operands already held), so the
	// heap may overshoot the limit by about one operation's result.
	memPollMillis = 10
	// abandonGraceMillis is how long a cancelled call may take to stop.
	abandonGraceMillis = 5000
	// reprCheckEvery is how many values the bounded repr visits between
	// looks at the limits.
	reprCheckEvery = 1 << 10
)

// heapBytes is the bytes of heap objects now, live or not yet swept, and
// the live bytes the last collection found (runtime/metrics).
func heapBytes() (objects, live int64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	for i, v := range []*int64{&objects, &live} {
		if s[i].Value.Kind() == metrics.KindUint64 {
			*v = int64(s[i].Value.Uint64())
		}
	}
	return objects, live
}

// overMemory reports whether the heap has grown past limit bytes above
// base: its live objects as of the last collection, or all its objects,
// garbage not yet collected included, past twice the limit (a collection
// runs when the heap doubles, so garbage alone does not get there). It
// forces no collection: a forced one would wait for the very operation
// it should stop.
func overMemory(base, limit int64) bool {
	objects, live := heapBytes()
	return live-base > limit || objects-base > 2*limit
}

// fmtBytes writes n bytes as "1 GiB", "64 MiB" or "1000 bytes".
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// errReprStopped tells the bounded repr's callers that a limit stopped it;
// guard turns it into the limit's error.
var errReprStopped = errors.New("stopped")

// reprWriter is Starlark's repr (go.starlark.net writeValue, the same text)
// that charges one step per value to the call's step budget and looks at
// the call's limits as it goes, so that str() of a huge or deeply nested
// value stops like any other Starlark code. Cycles print as [...] and
// {...} as in Starlark, found by a set, not a scan of the path.
type reprWriter struct {
	m     *Starlark
	t     *starlark.Thread
	out   strings.Builder
	path  map[starlark.Value]bool
	count int
	depth int
}

// MaxReprDepth is how deeply nested a value str(), repr(), print() and
// fail() of a Starlark world model may print: 10,000 levels of lists,
// tuples, sets and dicts (Python stops at 1,000). A deeper value is an
// error of the call, not a stack overflow of the whole process (each level
// costs the printer about 1 KiB of stack; a million levels crashed it).
const MaxReprDepth = 10000

func (w *reprWriter) visit() error {
	w.t.Steps++
	if w.count++; w.count%reprCheckEvery != 0 {
		return nil
	}
	if w.t.Steps >= w.m.curLimit {
		w.m.stepHit = true
		return errReprStopped
	}
	if w.m.stopped.Load() || (w.m.ctx != nil && w.m.ctx.Err() != nil) {
		return errReprStopped
	}
	return nil
}

func (w *reprWriter) write(v starlark.Value) error {
	if err := w.visit(); err != nil {
		return err
	}
	switch v.(type) {
	case *starlark.List, starlark.Tuple, *starlark.Set, *starlark.Dict:
		if w.depth++; w.depth > MaxReprDepth {
			return fmt.Errorf("value nested deeper than %d levels cannot be printed", MaxReprDepth)
		}
		defer func() { w.depth-- }()
	}
	switch v := v.(type) {
	case starlark.String:
		w.out.WriteString(syntax.Quote(string(v), false))
	case *starlark.List:
		return w.seq("[", "]", v, v.Len(), v.Index)
	case starlark.Tuple:
		if len(v) == 1 {
			return w.seq("(", ",)", nil, 1, v.Index)
		}
		return w.seq("(", ")", nil, len(v), v.Index)
	case *starlark.Set:
		items := make([]starlark.Value, 0, v.Len())
		it := v.Iterate()
		var x starlark.Value
		for it.Next(&x) {
			items = append(items, x)
		}
		it.Done()
		return w.seq("set([", "])", nil, len(items), func(i int) starlark.Value { return items[i] })
	case *starlark.Dict:
		w.out.WriteByte('{')
		if w.path[v] {
			w.out.WriteString("...")
		} else {
			w.path[v] = true
			for i, kv := range v.Items() {
				if i > 0 {
					w.out.WriteString(", ")
				}
				if err := w.write(kv[0]); err != nil {
					return err
				}
				w.out.WriteString(": ")
				if err := w.write(kv[1]); err != nil {
					return err
				}
			}
			delete(w.path, v)
		}
		w.out.WriteByte('}')
	default:
		w.out.WriteString(v.String())
	}
	return nil
}

// seq writes open, the n elements at(i) separated by ", ", and end; self is
// the list whose cycles print as "...", or nil.
func (w *reprWriter) seq(open, end string, self starlark.Value, n int, at func(int) starlark.Value) error {
	w.out.WriteString(open)
	if self != nil && w.path[self] {
		w.out.WriteString("...")
	} else {
		if self != nil {
			w.path[self] = true
		}
		for i := range n {
			if i > 0 {
				w.out.WriteString(", ")
			}
			if err := w.write(at(i)); err != nil {
				return err
			}
		}
		if self != nil {
			delete(w.path, self)
		}
	}
	w.out.WriteString(end)
	return nil
}

// repr is v's Starlark repr under the call's limits; str is true for
// str()/print(), which write a string as it is.
func (m *Starlark) repr(t *starlark.Thread, v starlark.Value, str bool) (string, error) {
	if s, ok := v.(starlark.String); ok && str {
		return string(s), nil
	}
	if b, ok := v.(starlark.Bytes); ok && str {
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	}
	w := &reprWriter{m: m, t: t, path: map[starlark.Value]bool{}}
	if err := w.write(v); err != nil {
		return "", err
	}
	return w.out.String(), nil
}

// joinArgs is print's and fail's text: the args (strings as they are)
// separated by sep.
func (m *Starlark) joinArgs(t *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (string, error) {
	sep := " "
	if err := starlark.UnpackArgs(name, nil, kwargs, "sep?", &sep); err != nil {
		return "", err
	}
	parts := make([]string, len(args))
	for i, a := range args {
		s, err := m.repr(t, a, true)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return strings.Join(parts, sep), nil
}

// builtinStr is str(x) under the call's limits (go.starlark.net str).
func (m *Starlark) builtinStr(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("str does not accept keyword arguments")
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("str: got %d arguments, want exactly 1", len(args))
	}
	s, err := m.repr(t, args[0], true)
	return starlark.String(s), err
}

// builtinRepr is repr(x) under the call's limits.
func (m *Starlark) builtinRepr(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	s, err := m.repr(t, x, false)
	return starlark.String(s), err
}

// builtinPrint is print(*args, sep=" ") under the call's limits.
func (m *Starlark) builtinPrint(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, err := m.joinArgs(t, "print", args, kwargs)
	if err != nil {
		return nil, err
	}
	t.Print(t, s)
	return starlark.None, nil
}

// builtinFail is fail(*args, sep=" ") under the call's limits.
func (m *Starlark) builtinFail(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, err := m.joinArgs(t, "fail", args, kwargs)
	if err != nil {
		return nil, err
	}
	return nil, errors.New("fail: " + s)
}
