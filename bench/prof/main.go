// Command prof runs the judge like `evident judge` (same package calls, seed
// speech profile) with profiling, to see where an end-to-end run spends its
// time and memory:
//
//	go run ./bench/prof -turns T -cards C -lexicon L [-out F] [-workers N] [-index] [-exec SQL] \
//		[-cpuprofile cpu.out] [-heapprofile heap.out] [-trace trace.out] [-db store.db]
//
// -trace writes an execution trace (runtime/trace) of the run: `go tool
// trace -pprof=sync trace.out` then shows who waited on whom (the judge's
// workers on the store's writer, say).
//
// -index, with -db, then writes the run's search index as judge --db does
// (store.IndexRunText), and -cpuprofile covers that step alone.
//
// -exec SQL, with -db, runs SQL on the new store before the run, to measure
// what a schema change would save (DROP INDEX verdict_by_session, say).
//
// With -db it runs `evident judge --db` instead (runstore.JudgeToStoreWith
// into a fresh store file: import, judge, search index, summary), to see
// where the store's writes go; -out and -heapprofile are then unused.
//
// The heap profile is written when the first records reach the output, that
// is after pass 1 has built its index and before pass 2 has finished: its
// inuse_space shows what the index keeps alive for the whole of pass 2.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/runstore"
	"evident/store"

	_ "modernc.org/sqlite"
)

// execSQL is -exec; indexToo is -index.
var (
	execSQL  string
	indexToo bool
)

func main() {
	turns := flag.String("turns", "", "chat_turn table")
	cards := flag.String("cards", "", "character_card table")
	lexicon := flag.String("lexicon", "", "topic_lexicon table")
	out := flag.String("out", "", "records file (default: discard)")
	workers := flag.Int("workers", 0, "workers (0 = GOMAXPROCS)")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	heap := flag.String("heapprofile", "", "write a heap profile here at the start of pass 2")
	dbPath := flag.String("db", "", "judge into this new store file (evident judge --db)")
	tracePath := flag.String("trace", "", "write an execution trace here")
	flag.BoolVar(&indexToo, "index", false, "with -db: write the run's search index after the run (store.IndexRunText), as judge --db does; -cpuprofile then covers only that")
	flag.StringVar(&execSQL, "exec", "", "with -db: SQL run on the new store before the run (an experiment: drop an index, say)")
	flag.Parse()
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "prof:", err)
			os.Exit(1)
		}
		defer func() { trace.Stop(); f.Close() }()
	}
	if *dbPath != "" {
		if err := runDB(*turns, *cards, *lexicon, *dbPath, *workers, *cpu); err != nil {
			fmt.Fprintln(os.Stderr, "prof:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*turns, *cards, *lexicon, *out, *workers, *cpu, *heap); err != nil {
		fmt.Fprintln(os.Stderr, "prof:", err)
		os.Exit(1)
	}
}

func run(turnsPath, cardsPath, lexiconPath, outPath string, workers int, cpuPath, heapPath string) error {
	ins, err := openTables(turnsPath, cardsPath, lexiconPath)
	if err != nil {
		return err
	}
	j, _, err := batch.NewJudge(ins[1], ins[2], nil)
	if err != nil {
		return err
	}
	var w io.Writer = io.Discard
	if outPath != "" {
		f, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<16)
		defer bw.Flush()
		w = bw
	}
	if heapPath != "" {
		w = &heapAtFirstWrite{Writer: w, path: heapPath}
	}
	stop, err := startCPUProfile(cpuPath)
	if err != nil {
		return err
	}
	defer stop()
	tally, err := (&batch.Run{Judge: j, Turns: ins[0], Workers: workers}).Do(context.Background(), batch.Outputs{Lines: w})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, tally)
	return nil
}

// runDB is evident judge --db into a new store file at dbPath, profiled.
func runDB(turnsPath, cardsPath, lexiconPath, dbPath string, workers int, cpuPath string) error {
	if _, err := os.Stat(dbPath); err == nil {
		return fmt.Errorf("%s exists; -db wants a new store file", dbPath)
	}
	ins, err := openTables(turnsPath, cardsPath, lexiconPath)
	if err != nil {
		return err
	}
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if execSQL != "" {
		raw, err := sql.Open("sqlite", dbPath)
		if err != nil {
			return err
		}
		_, err = raw.Exec(execSQL)
		raw.Close()
		if err != nil {
			return fmt.Errorf("-exec: %w", err)
		}
	}
	profile := cpuPath
	if indexToo {
		profile = ""
	}
	stop, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	id, tally, err := runstore.JudgeToStoreWith(ctx, db, runstore.Tables{Turns: ins[0], Cards: ins[1], Lexicon: ins[2]}, runstore.Options{Workers: workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "run %d: %v in %.1f s\n", id, tally, time.Since(start).Seconds())
	if !indexToo {
		return nil
	}
	stopIndex, err := startCPUProfile(cpuPath)
	if err != nil {
		return err
	}
	defer stopIndex()
	start = time.Now()
	if err := db.IndexRunText(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "search index of run %d written in %.1f s\n", id, time.Since(start).Seconds())
	return nil
}

// openTables opens the three tables as sources, in that order.
func openTables(paths ...string) ([3]ingest.Source, error) {
	var ins [3]ingest.Source
	for i, p := range paths {
		in, err := ingest.File(p)
		if err != nil {
			return ins, err
		}
		ins[i] = in
	}
	return ins, nil
}

// startCPUProfile starts a CPU profile into path ("" for none); stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// heapAtFirstWrite writes a heap profile (after a GC) on the first Write.
type heapAtFirstWrite struct {
	io.Writer
	path string
	done bool
}

func (h *heapAtFirstWrite) Write(p []byte) (int, error) {
	if !h.done {
		h.done = true
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "prof: at the start of pass 2: live heap %.1f MiB\n", float64(ms.HeapAlloc)/(1<<20))
		f, err := os.Create(h.path)
		if err != nil {
			return 0, err
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			f.Close()
			return 0, err
		}
		if err := f.Close(); err != nil {
			return 0, err
		}
	}
	return h.Writer.Write(p)
}
