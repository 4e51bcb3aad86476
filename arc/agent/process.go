package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The supervisor's limits (baseline1 agent_runner.py): an agent whose
// output has been idle this long is stopped (SIGTERM to its process group,
// SIGKILL after the grace), and the run recovers at most MaxRecoveries
// times (spec arc.md "The controller, exactly": "Supervisor").
const (
	DefaultIdleLimit  = 30 * time.Minute
	DefaultGrace      = 30 * time.Second
	DefaultPoll       = 5 * time.Second
	MaxRecoveries     = 10
	maxAgentLineBytes = 16 << 20
)

// Watchdog is the idle watchdog of one agent process, without timers of its
// own: Touch marks activity (an output line), Check is called on every poll
// tick and says what to do. It is safe for concurrent use.
type Watchdog struct {
	// Idle is the inactivity that stops the process (DefaultIdleLimit);
	// Grace the wait between SIGTERM and SIGKILL (DefaultGrace).
	Idle, Grace time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu     sync.Mutex
	last   time.Time
	termAt time.Time
}

// Watchdog actions returned by Check.
const (
	WatchNone      = ""
	WatchTerminate = "terminate"
	WatchKill      = "kill"
)

func (w *Watchdog) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

// Start marks the process start as the first activity.
func (w *Watchdog) Start() { w.Touch() }

// Touch records activity now.
func (w *Watchdog) Touch() {
	w.mu.Lock()
	w.last = w.now()
	w.mu.Unlock()
}

// Check returns WatchTerminate once when the process has been idle for at
// least Idle, then WatchKill once Grace has passed since, else WatchNone.
func (w *Watchdog) Check() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	idle, grace := w.Idle, w.Grace
	if idle <= 0 {
		idle = DefaultIdleLimit
	}
	if grace <= 0 {
		grace = DefaultGrace
	}
	switch {
	case w.termAt.IsZero() && now.Sub(w.last) >= idle:
		w.termAt = now
		return WatchTerminate
	case !w.termAt.IsZero() && now.Sub(w.termAt) >= grace:
		w.termAt = now.Add(1 << 62) // once
		return WatchKill
	}
	return WatchNone
}

// Fired reports whether Check has returned WatchTerminate.
func (w *Watchdog) Fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.termAt.IsZero()
}

// Runner runs one agent process per turn: the prompt on its stdin, every
// stdout line to the caller, stderr lines to the caller too (marked
// {"stream":"stderr","text":…}), under the idle watchdog.
type Runner struct {
	// Idle, Grace: see Watchdog (defaults 30 min, 30 s).
	Idle, Grace time.Duration
	// Now is the clock of the watchdog (nil: time.Now).
	Now func() time.Time
	// Ticks, when set, drives the watchdog's checks (tests send on it);
	// nil: a time.Ticker of DefaultPoll.
	Ticks <-chan time.Time
	// Env is added to the process's environment.
	Env []string
}

// Process is the result of one run.
type Process struct {
	ExitCode int
	TimedOut bool
	Seconds  float64
}

// Run starts argv in dir with stdin as its input, calls line for each line
// of stdout (and, as {"stream":"stderr","text":…}, of stderr), and waits.
// A line over 16 MiB is cut. The exit code is -1 when the process was
// killed by a signal. Errors: the process could not start (the error names
// argv[0]), or ctx ended (the process group is killed first).
func (r *Runner) Run(ctx context.Context, dir string, argv []string, stdin string, line func(stream string, b []byte)) (Process, error) {
	if len(argv) == 0 {
		return Process{}, errors.New("agent: empty command")
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = newProcessGroup()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Process{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Process{}, err
	}
	start := now()
	if err := cmd.Start(); err != nil {
		return Process{}, fmt.Errorf("agent: start %s: %w", argv[0], err)
	}
	w := &Watchdog{Idle: r.Idle, Grace: r.Grace, Now: now}
	w.Start()
	var mu sync.Mutex
	emit := func(stream string, b []byte) {
		w.Touch()
		mu.Lock()
		defer mu.Unlock()
		if line != nil {
			line(stream, b)
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); scanLines(stdout, "stdout", emit) }()
	go func() { defer wg.Done(); scanLines(stderr, "stderr", emit) }()
	ticks := r.Ticks
	if ticks == nil {
		t := time.NewTicker(DefaultPoll)
		defer t.Stop()
		ticks = t.C
	}
	done := make(chan error, 1)
	go func() {
		wg.Wait()
		done <- cmd.Wait()
	}()
	pid := cmd.Process.Pid
	var waitErr error
	var ctxErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ctx.Done():
			ctxErr = ctx.Err()
			killGroup(pid, syscall.SIGKILL)
		case <-ticks:
			switch w.Check() {
			case WatchTerminate:
				killGroup(pid, syscall.SIGTERM)
			case WatchKill:
				killGroup(pid, syscall.SIGKILL)
			}
		}
	}
	p := Process{TimedOut: w.Fired(), Seconds: now().Sub(start).Seconds()}
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		p.ExitCode = ee.ExitCode()
	default:
		return p, waitErr
	}
	return p, ctxErr
}

// scanLines reads r line by line (each line cut at 16 MiB) into emit.
func scanLines(r io.Reader, stream string, emit func(string, []byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxAgentLineBytes {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(buf) > 0 {
			emit(stream, bytes.TrimRight(buf, "\r\n"))
		}
		buf = buf[:0]
		if err != nil {
			io.Copy(io.Discard, r)
			return
		}
	}
}
